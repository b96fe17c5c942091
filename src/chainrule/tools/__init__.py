"""The tools around the framework, for running and seeing it rather than computing: the
command line and its recipes (``chainrule train``), the demo, the Monitor, the walkthrough
page and the writing of their output files. Users reach them as ``cr.viz`` (drawing,
``explain``, ``Monitor``) and the ``chainrule`` command; nothing in the framework's centre
imports them."""
