"""The subcommands of ``companion``, one module each with ``configure(parser)`` and ``run(args)``."""
