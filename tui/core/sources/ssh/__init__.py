"""SSH sources: connections (connect, auth), the remote side (remote_side, scripts), the source
(source) with its state (state), channels (channels), opening a file (opening) and following it
(tail), and whole-file reads for ``summary`` (whole). Nothing is imported here, so that importing
a pure-Python part does not load asyncssh."""
