// Package classify labels what an AI agent wants to run as safe, review or
// high risk, with a one-line reason and the findings behind it.
//
// Bash parses a shell command with mvdan.cc/sh/v3/syntax (bash dialect) and
// classifies every simple command it can reach: lists, pipelines,
// subshells, groups, functions, control flow, command and process
// substitutions, here-strings, here-documents, and the scripts handed to
// wrappers (sudo, env, timeout, xargs, sh -c, eval, …). Words are
// normalised as bash would (quote and backslash removal, $'…' escapes,
// brace expansion, literal ${IFS}) before rules match them. The verdict is
// the highest level of the parts; Risk.Reason names the decisive part and
// every finding's rule.
//
// Path classifies one file-tool operation (read, write, delete) on a path.
// For both, a path with glob characters is judged by every path it could
// match (cat ~/.ssh/* is a secret read), and rules about the home
// directory hold for every user's home (~alice, /root, /home/NAME).
//
// The levels follow the labelling policy in docs/classifier.md:
//
//   - safe: provably read-only on local state; auto-pass.
//   - review: recoverable or scoped side effects, arbitrary project code,
//     network fetches, anything the classifier cannot see through; a human
//     confirms.
//   - high: irreversible destruction, privilege escalation, remote code
//     execution, persistence or tampering, secret reads or exfiltration;
//     blocked by default.
//
// Rules are data (Rules, DefaultRules, ParseRules): command tables,
// wrappers, per-command flag rules, dangerous environment variables and
// sensitive paths, extendable or replaceable from YAML. Argument semantics
// that tables cannot express (find -exec, sed scripts, git refspecs, awk
// programs, …) are built-in analyzers that rules refer to by name.
//
// BashGate and PathGate wrap the classifiers as gate.Gate implementations.
// Each declares the tools it judges (gate.Scoper): by default the tools
// whose input schema declares a string field it reads — "command" or
// "cmd" for BashGate, "path" or "file_path" for PathGate, in every
// spelling gate.SameFieldName reads as them — so an executor with a bash
// gate and a read_file tool never asks the bash gate about read_file.
// ForTools("bash") or WithScope name the tools instead, and the executor
// refuses (executor.ErrGateScope) a named tool whose schema lacks the
// field, and a tool in PathGate's scope with no file operation (see
// WithToolOps, DefaultToolOps). A call to a tool in scope whose input
// lacks the field is denied (fail closed).
package classify
