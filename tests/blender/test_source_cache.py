"""The stored source Text is parsed once per revision (blender/sources.py) for every reader: the render
pipeline and the robot operators do not re-parse it."""
from __future__ import annotations

from rscene_addon.blender import scene_import, sources
from rscene_addon.formats import rscene
from rscene_addon.ops import robot_ops
from rscene_addon.render import pipeline

SCENE = ("raisim_engine_scene 2\n"
         "object /World/Box box 0 0 0.5 1 0 0 0 1 1 1 0.5 1 1 default - false true false - static true 1 "
         "18446744073709551615\n"
         "camera /World/Cam 2 0 1 1 0 0 0 55 0.05 100 32 24 rgb true\n")


def test_render_and_robot_ops_read_the_cached_document(blank, tmp_path, monkeypatch):
    import bpy

    path = tmp_path / "s.rscene"
    path.write_text(SCENE)
    scene_import.import_scene_file(str(path), bpy.context.scene, report=lambda *a: None)
    name = bpy.context.scene.rscene.source
    doc = sources.document(name)
    assert doc is not None and len(doc.of("camera")) == 1
    parses = []
    real = rscene.loads
    monkeypatch.setattr(rscene, "loads", lambda *a, **k: parses.append(a) or real(*a, **k))
    assert pipeline.load_document(bpy.context.scene) is doc
    box = next(ob for ob in bpy.data.objects if ob.rscene.path == "/World/Box")
    assert robot_ops._ik_record(box) is None  # no articulated_ik record in the document
    assert parses == []
    sources.new_revision(bpy.data.texts[name])  # a rewrite: parsed again, once
    assert pipeline.load_document(bpy.context.scene) is not doc
    assert robot_ops._ik_record(box) is None
    assert len(parses) == 1
