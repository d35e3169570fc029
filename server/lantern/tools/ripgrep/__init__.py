"""ripgrep under Lantern's rules: the process, its JSON events, the check on every path shown."""
