"""What a pane knows and shows, in pure Python (no Textual): its state, its recent records,
its numbers as text, and the plan of panes a command opens."""
