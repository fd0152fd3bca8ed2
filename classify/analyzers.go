package classify

// analyzerFunc is a built-in argument analyzer: it reads one command
// line (actx), adds findings, may adjust the baseline level and the
// operands checked as files, and returns the stream traits it adds.
type analyzerFunc func(r *run, a *actx) traits

// builtinAnalyzers is the registry of built-in analyzers that
// CommandRule.Analyzer names: one name, one function. Each compiled rule
// set holds its own copy.
func builtinAnalyzers() map[string]analyzerFunc {
	return map[string]analyzerFunc{
		"rm":          (*run).anRm,
		"find":        (*run).anFind,
		"fd":          (*run).anFd,
		"ls":          (*run).anLs,
		"names":       (*run).anNames,
		"sed":         (*run).anSed,
		"awk":         (*run).anAwk,
		"git":         (*run).anGit,
		"tar":         (*run).anTar,
		"sort":        (*run).anSort,
		"uniq":        (*run).anUniq,
		"tee":         (*run).anTee,
		"copy":        (*run).anCopy,
		"ln":          (*run).anLn,
		"chmod":       (*run).anChmod,
		"dd":          (*run).anDd,
		"curl":        (*run).anCurl,
		"wget":        (*run).anWget,
		"nc":          (*run).anNc,
		"socat":       (*run).anSocat,
		"kill":        (*run).anKill,
		"pkill":       (*run).anPkill,
		"shell":       (*run).anShell,
		"interpreter": (*run).anInterp,
		"eval":        (*run).anEval,
		"source":      (*run).anSource,
		"printenv":    (*run).anPrintenv,
		"ps":          (*run).anPs,
		"date":        func(r *run, a *actx) traits { r.anDate(a); return 0 },
		"compress":    func(r *run, a *actx) traits { r.anCompress(a); return 0 },
		"editor":      func(r *run, a *actx) traits { r.anEditor(a); return 0 },
		"pager":       func(r *run, a *actx) traits { r.anPager(a); return 0 },
		"ed":          func(r *run, a *actx) traits { r.anEd(a); return 0 },
		"dc":          func(r *run, a *actx) traits { r.anDc(a); return 0 },
		"jobs":        (*run).anJobs,
		"tmux":        (*run).anTmux,
		"zip":         func(r *run, a *actx) traits { r.anZip(a); return 0 },
		"extract":     func(r *run, a *actx) traits { r.anExtract(a); return 0 },
		"split":       func(r *run, a *actx) traits { r.anSplit(a); return 0 },
		"debugger":    func(r *run, a *actx) traits { r.anDebugger(a); return 0 },
		"history":     func(r *run, a *actx) traits { r.anHistory(a); return 0 },
		"ulimit":      func(r *run, a *actx) traits { r.anUlimit(a); return 0 },
		"umask":       (*run).anUmask,
		"fc":          (*run).anFc,
		"unset":       (*run).anUnset,
		"crontab":     (*run).anCrontab,
		"docker":      func(r *run, a *actx) traits { r.anDocker(a); return 0 },
		"kubectl":     func(r *run, a *actx) traits { r.anKubectl(a); return 0 },
		"sql":         func(r *run, a *actx) traits { r.anSQL(a); return 0 },
		"rsync":       func(r *run, a *actx) traits { r.anRsync(a); return 0 },
		"scp":         (*run).anScp,
		"man":         (*run).anMan,
		"rg":          (*run).anRg,
		"grep":        (*run).anGrep,
		"cd":          func(r *run, a *actx) traits { r.anCd(a); return 0 },
		"alias":       (*run).anAlias,
		"varname":     func(r *run, a *actx) traits { r.anVarName(a); return 0 },
		"rebind":      func(r *run, a *actx) traits { r.anRebind(a); return 0 },
		"trap":        (*run).anTrap,
		"shopt":       (*run).anShopt,
		"xxd":         (*run).anXxd,
		"base64":      (*run).anBase64,
		"printf":      (*run).anPrintf,
		"echo":        (*run).anEcho,
		"systemctl":   func(r *run, a *actx) traits { r.anSystemctl(a); return 0 },
		"ssh":         func(r *run, a *actx) traits { r.anSSH(a); return 0 },
		"cloud":       func(r *run, a *actx) traits { r.anCloud(a); return 0 },
		"mount":       (*run).anMount,
		"keygen":      (*run).anKeygen,
		"capture":     (*run).anCapture,
		"jq":          (*run).anJq,
	}
}

// analyze runs a built-in argument analyzer.
func (r *run) analyze(name string, a *actx) traits {
	if f, ok := r.cr.analyzers[name]; ok {
		return f(r, a)
	}
	return 0
}
