"""Shared fixtures for the robots tests: corpus file lists and small hand-written robots."""
from __future__ import annotations

from pathlib import Path

CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus"
URDF_FILES = sorted((CORPUS / "urdf").rglob("*.urdf")) + sorted((CORPUS / "raisim_xml").rglob("*.urdf"))
MJCF_FILES = sorted((CORPUS / "mjcf").rglob("*.xml"))
TEMPLATE_PARAMETERS = {"base_length": 1.0, "base_width": 0.5, "flipper_radius": 0.1, "rho": 100.0,
                       "track_y_offset": 0.3, "wheel_radius": 0.1, "wheel_width": 0.05, "wheel_y_offset": 0.2}

PLANAR_2LINK = """<?xml version="1.0"?>
<robot name="planar2">
  <link name="world"/>
  <link name="l1"/>
  <link name="l2"/>
  <link name="tip"/>
  <joint name="j1" type="revolute">
    <parent link="world"/><child link="l1"/>
    <origin xyz="0 0 0.5"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/>
  </joint>
  <joint name="j2" type="revolute">
    <parent link="l1"/><child link="l2"/>
    <origin xyz="0.7 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/>
  </joint>
  <joint name="tip_fixed" type="fixed">
    <parent link="l2"/><child link="tip"/>
    <origin xyz="0.4 0 0"/>
  </joint>
</robot>
"""

ARM_3LINK = """<robot name="arm3">
  <link name="world"/><link name="a"/><link name="b"/><link name="c"/><link name="ee"/>
  <joint name="yaw" type="continuous"><parent link="world"/><child link="a"/><axis xyz="0 0 1"/></joint>
  <joint name="shoulder" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0 0.3"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3"/></joint>
  <joint name="elbow" type="revolute"><parent link="b"/><child link="c"/><origin xyz="0 0 0.5"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3"/></joint>
  <joint name="ee_fixed" type="fixed"><parent link="c"/><child link="ee"/><origin xyz="0 0 0.4"/></joint>
</robot>
"""
