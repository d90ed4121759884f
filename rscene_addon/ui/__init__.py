"""Panels: node records in Object properties, scene-wide settings in Scene properties."""
