"""The base layer: spatial maths and atomic file writing, shared by every other package.

It imports nothing from the rest of the add-on (only numpy and the standard library), so the scene
model, the format readers, the simulator, the sensors and the robots can all use one copy.
"""
