"""ONO 99 Arena's protocol stubs (``ono99.v1``) and Python bot SDK (``ono99.bot``).

Importing this package does nothing else; :mod:`ono99.transport` picks gRPC's transport
where servers and clients are made.
"""
