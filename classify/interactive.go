package classify

import "path"

// WithInteractiveInput says the agent can type into a program after it
// started it (Codex CLI's write_stdin sends keystrokes to a command that
// exec_command started in a terminal, and no hook sees them): a program
// that reads the terminal and can run commands from it — a pager (less:
// "!cmd"), an editor (vi: ":!cmd"), man and info (through their pager), a
// terminal multiplexer (a shell), a file-transfer or mail client — is then
// review (rule interactive.input), whatever its arguments say, because its
// later input is not judged. Off by default: other agents run commands
// without a terminal, where these programs read no input.
func WithInteractiveInput(on bool) Option { return func(c *config) { c.interactive = on } }

// interactivePrograms read commands from a terminal and can run shell
// commands from them (or are a shell).
var interactivePrograms = map[string]string{
	"less": "a pager", "more": "a pager", "most": "a pager", "pg": "a pager", "lv": "a pager",
	"vi": "an editor", "vim": "an editor", "nvim": "an editor", "view": "an editor", "vimdiff": "an editor",
	"ex": "an editor", "rvim": "an editor", "emacs": "an editor", "nano": "an editor", "pico": "an editor",
	"joe": "an editor", "jed": "an editor", "mcedit": "an editor", "mc": "a file manager",
	"man": "a manual pager", "info": "a manual pager", "pinfo": "a manual pager",
	"screen": "a terminal multiplexer", "tmux": "a terminal multiplexer", "byobu": "a terminal multiplexer",
	"ftp": "a file-transfer client", "sftp": "a file-transfer client", "lftp": "a file-transfer client",
	"mutt": "a mail client", "neomutt": "a mail client", "mail": "a mail client", "w3m": "a browser", "lynx": "a browser",
	"dc": "a calculator with a shell escape", "ed": "an editor",
}

// interactive adds interactive.input for a program in interactivePrograms
// when the classifier was told the agent can type into it.
func (r *run) interactive(key string, cx *callCtx) {
	if !r.c.cfg.interactive {
		return
	}
	if what, ok := interactivePrograms[path.Base(key)]; ok {
		r.add(cx, review, "interactive.input", key+" is "+what+" that reads commands from the terminal: input the agent types into it later (write_stdin) is not judged")
	}
}
