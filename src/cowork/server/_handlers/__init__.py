"""JSON-RPC handlers, one module per concern; each handler adapts one method to one core call.

Nothing here registers itself: `cowork.server._registry` maps every method to its handler.
"""
