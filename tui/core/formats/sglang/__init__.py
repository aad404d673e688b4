"""SGLang: ``Decode batch`` lines (``decode``), finished requests (``finish``), startup markers
and server args, its ``/metrics`` gauges (``metrics``), its accept-rate definitions by era
(``rates``); the plug-in is :class:`tui.core.formats.sglang.plugin.SGLang`. Nothing is imported
here: the scanners load the grammar without the line parsers."""
