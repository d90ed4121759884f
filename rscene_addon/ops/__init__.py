"""Thin Blender operators: read properties, call the library, report."""
