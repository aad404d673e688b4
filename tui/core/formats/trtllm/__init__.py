"""TensorRT-LLM (``trtllm-serve``): its ``/metrics`` spec-decode counters (``metrics``); no log
line is read. The plug-in is :class:`tui.core.formats.trtllm.plugin.TrtLlm`."""
