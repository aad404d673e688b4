"""The TUI's screens: the watch/compare screen, help and the theme picker."""
