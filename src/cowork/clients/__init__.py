"""Thin clients. They import only `cowork.protocol`, `cowork.clients.connection`, and their UI libraries."""
