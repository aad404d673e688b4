"""SSH sources: connections (connect), the remote side (remote), following (follow), the source
(source) and whole-file reads for ``summary`` (summary). Nothing is imported here, so that
importing a pure-Python part does not load asyncssh."""
