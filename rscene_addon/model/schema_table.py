"""Every ``.rscene`` record kind: positional layouts, keys, types and Engine 2 defaults.

Transcribed from the format documents: the newer ``RsceneFile.rst`` (field tables with types and defaults;
it wins where the two disagree) and the older ``RsceneFile.OLDER.rst`` / seed ``rscene_format_v1.txt``
(the only source for the editor-state records, ``compound``, ``deformable``, ``granular``,
``articulated*``, ``sensor``, ``projected_decal``, ``irradiance_volume`` and ``point_cloud``).
Field names follow the documents' key names; positional fields get the names the documents use for them.

Where a default is not documented, the value the older document's example writes is used (marked
"example" below); keys a document only mentions in passing are not declared and stay raw text, which the
codec keeps and writes back anyway.
"""
from __future__ import annotations

from .schema import F, RecordSchema, default_id
from .values import ALL_GROUPS  # noqa: F401 - re-exported for the schema users
from .values import (BYTE_LIST, COLOR, COLOR4, COLOR_LIST, FLAG, GROUP, INT, INT_LIST, LIST,  # noqa: F401
                     NUMBER, QUAT, TEXT, TEXT_LIST, TRANSFORM_LIST, VEC2, VEC3, Name, PackedVec, StructList,
                     Vec)


# Four positional numbers of a base color (material #1 to #4).
RGBA = Vec(4)
RGBA.name = "rgba"
# ``;``-separated x,y,z entries (granular positions, point cloud points).
VEC3_LIST = StructList((3,), 0.0)
VEC3_LIST.name = "vec3_list"
# A vec3 packed with commas into one positional token (articulated_ik target).
PACKED_VEC3 = PackedVec(3)

BODY_MODE = Name("static", "kinematic", "dynamic", "visual_only",
                 aliases={"fixed": "static", "movable": "dynamic", "visualonly": "visual_only",
                          "visual": "visual_only"})
PRIMITIVE = Name("ground", "box", "sphere", "cylinder", "capsule", "mesh",
                 aliases={"plane": "ground", "cube": "box", "static_mesh": "mesh"})
# Records the newer document does not constrain (the older one lists ``half_space, ...``).
ANY_PRIMITIVE = Name("ground", "box", "sphere", "cylinder", "capsule", "mesh",
                     aliases={"plane": "ground", "cube": "box", "static_mesh": "mesh"}, strict=False)
INSTANCE_PRIMITIVE = PRIMITIVE  # box, sphere, cylinder, capsule, mesh; ``ground`` reads, checks.py flags it
# Engine 2 writes ``unreal_preview`` and ``aces_approx``; the names are kept as Engine 2 writes them.
COLOR_MODE = Name("fast_linear", "aces_approx", "filmic_approx", "agx_approx", "unreal_preview",
                  aliases={"linear": "fast_linear", "aces": "aces_approx", "filmic": "filmic_approx",
                           "agx": "agx_approx", "unreal": "unreal_preview",
                           "unreal_preview_approx": "unreal_preview"})
COLLISION_MODE = Name("convex_hull", "original_mesh", "convexify", "primitive", "none", "default",
                      aliases={"convexhull": "convex_hull", "convex": "convex_hull",
                               "original": "original_mesh", "triangle_mesh": "original_mesh",
                               "trimesh": "original_mesh", "coacd": "convexify",
                               "convex_decomposition": "convexify"})


def _object_body_mode(record):
    """Older layouts have no body mode: 19 fields say static (fixed) or dynamic; 17 fields are dynamic."""
    # the layout's offsets dict, not a walk of its fields: every new object asks (a tenth of making one)
    if record.schema.field("fixed") and "fixed" in record.schema.offsets(record.layout):
        return "static" if record.get("fixed") else "dynamic"
    return "dynamic"


def _empty(value_type):
    """Default of a list field: a fresh empty array shaped like a decoded value."""
    return lambda record: value_type.decode("")


_EMPTY_LIST, _EMPTY_BYTE_LIST, _EMPTY_INT_LIST = _empty(LIST), _empty(BYTE_LIST), _empty(INT_LIST)
_EMPTY_COLOR_LIST, _EMPTY_TRANSFORM_LIST, _EMPTY_VEC3_LIST = (_empty(COLOR_LIST), _empty(TRANSFORM_LIST),
                                                              _empty(VEC3_LIST))


def _same_as(name):
    """A default that repeats another field (a material's id is its name)."""
    return lambda record: record.get(name)


def _node_keys(prefix: str) -> tuple:
    """``id`` (default: prefix + path) and ``parentGroupId`` of a scene-tree node."""
    return (F("id", TEXT, default_id(prefix), "stable handle other records refer to"),
            F("parentGroupId", TEXT, "", "parent folder or node, by id or path"))


_SEGMENTATION_KEYS = (
    F("semanticClass", TEXT, ""), F("instanceId", INT, -1), F("segmentationColor", COLOR, None),
)
_COLLISION_FILTER_KEYS = (F("collisionGroup", GROUP, 1), F("collisionMask", GROUP, ALL_GROUPS))
_COLLISION_MODE = F("collisionMode", COLLISION_MODE, "convex_hull")
_MESH_COLLISION_KEYS = (  # the ``writeMeshCollision`` block that ends object and asset records
    F("meshCollision", COLLISION_MODE, "convex_hull"),
    F("customInertia", FLAG, False), F("inertiaDiagonal", VEC3, (0.0, 0.0, 0.0)),
    F("centerOfMass", VEC3, (0.0, 0.0, 0.0)),
    # example values; the CoACD defaults are not documented
    F("coacdThreshold", NUMBER, 0.08), F("coacdMaxConvexHull", INT, 8), F("coacdPreprocess", TEXT, "off"),
    F("coacdSampleResolution", INT, 800),
)
_POSE = (F("position", VEC3, (0.0, 0.0, 0.0)), F("quaternion", QUAT, (1.0, 0.0, 0.0, 0.0)))
_POSE_SCALE = _POSE + (F("scale", VEC3, (1.0, 1.0, 1.0)),)
def _instancing(defaults: tuple, middle: tuple = ()) -> tuple:
    """The InstancedVisuals setters shared by instanced_visual and terrain_foliage_layer, in Engine 2's order, ``middle`` keys before the upload and sorting flags. ``defaults``
    lists castShadows, detectable, automaticMeshLod, maxRenderedInstances, renderedInstanceStride,
    doubleBufferedInstanceUploads, sortTransparentInstances, projectedLod, projectedLodMinRadiusPixels and
    projectedLodMaxStride, in the newer document's order."""
    (shadows, detectable, lod, max_rendered, stride, double_buffered, sort_transparent, projected,
     projected_radius, projected_stride) = defaults
    head = (F("castShadows", FLAG, shadows), F("detectable", FLAG, detectable),
            F("automaticMeshLod", FLAG, lod), F("maxRenderedInstances", INT, max_rendered),
            F("renderedInstanceStride", INT, stride), F("projectedLod", FLAG, projected),
            F("projectedLodMinRadiusPixels", NUMBER, projected_radius),
            F("projectedLodMaxStride", INT, projected_stride))
    tail = (F("doubleBufferedInstanceUploads", FLAG, double_buffered),
            F("sortTransparentInstances", FLAG, sort_transparent))
    return head + tuple(middle) + tail


def _texture_transform(slot: str) -> tuple:
    return (F(f"{slot}TransformAuthored", FLAG, False), F(f"{slot}TransformScale", VEC2, (1.0, 1.0)),
            F(f"{slot}TransformOffset", VEC2, (0.0, 0.0)), F(f"{slot}TransformRotation", NUMBER, 0.0))


# ---------------------------------------------------------------------------------------------------------
# Whole-scene records

_HEADER = RecordSchema("raisim_engine_scene", ((F("version", INT),),), doc="Header: format version 1 or 2.")

_TIME_STEP = RecordSchema("time_step", ((F("dt", NUMBER, 0.0025),),), singleton=True,
                          doc="Integration time step in seconds.")

_GRAVITY = RecordSchema("gravity", ((F("gravity", VEC3, (0.0, 0.0, -9.81)),),), singleton=True,
                        doc="Gravity in m/s^2.")

_SOLVER = RecordSchema(
    "solver",
    ((F("iterations", INT, 80), F("tolerance", NUMBER, 1e-7), F("erp", NUMBER, 0.2),
      F("mode", TEXT, "accurate")),),
    keys=(
        F("erp2", NUMBER, 0.0),
        F("defaultFriction", NUMBER, 0.8), F("defaultRestitution", NUMBER, 0.0),
        F("defaultRestitutionThreshold", NUMBER, 0.001), F("defaultStaticFriction", NUMBER, 0.8),
        F("defaultStaticFrictionVelocityThreshold", NUMBER, 0.001),
        F("defaultRollingFriction", NUMBER, 0.0), F("defaultSpinningFriction", NUMBER, 0.0),
        F("contactAlphaInit", NUMBER, 1.0), F("contactAlphaMin", NUMBER, 1.0),
        F("contactAlphaDecay", NUMBER, 1.0),
        F("contactMaxIterations", INT, 80), F("contactThreshold", NUMBER, 1e-7),
        F("contactGjkMaxIterations", INT, 32), F("contactGjkTolerance", NUMBER, 1e-6),
        F("contactEpaMaxIterations", INT, 64), F("contactEpaTolerance", NUMBER, 1e-4),
        F("maxContactsPerPair", INT, 8),
        F("sweptCcdEnabled", FLAG, False), F("sweptCcdMinSpeed", NUMBER, 0.0),
        F("sweptCcdSpeculativeMargin", NUMBER, 1e-4),
        F("sleepingEnabled", FLAG, True), F("sleepingLinearVelocityThreshold", NUMBER, 0.002),
        F("sleepingAngularVelocityThreshold", NUMBER, 0.01), F("sleepingQuietSteps", INT, 5),
        F("broadphaseType", Name("sap3_axis", "multi_box_prune", "none",
                                 aliases={"multiboxprune": "multi_box_prune", "mbp": "multi_box_prune",
                                          "disabled": "none"}), "sap3_axis"),
        F("broadphaseWorldMin", VEC3, (-100.0, -100.0, -100.0)),
        F("broadphaseWorldMax", VEC3, (100.0, 100.0, 100.0)),
        F("broadphaseCellSize", VEC3, (1.0, 1.0, 1.0)),
        F("broadphaseUseWorldBounds", FLAG, False), F("broadphasePadding", NUMBER, 0.5),
        F("broadphaseMaxCellsPerAxis", INT, 128), F("broadphaseMaxCellsPerObject", INT, 64),
        F("worldTime", NUMBER, 0.0), F("fixedContactSolverIterationOrder", FLAG, False),
    ),
    singleton=True,
    doc="Contact solver, default material, collision detection and sleeping settings (Engine 2 defaults).",
)

_SNAPPING = RecordSchema(
    "snapping",
    (
        (F("grid", FLAG, True), F("angle", FLAG, True), F("scale", FLAG, False),
         F("reserved3", FLAG, False), F("reserved4", FLAG, False), F("reserved5", FLAG, False),
         F("reserved6", FLAG, False), F("reserved7", FLAG, False),
         F("gridSize", NUMBER, 0.1), F("angleDegrees", NUMBER, 15.0), F("scaleStep", NUMBER, 0.1),
         F("reserved11", NUMBER, 0.0)),
        (),  # editor state that the readers skip unchecked: a shorter record keeps its tokens as they are
    ),
    keys=(F("surfaceNormal", VEC3, (0.0, 0.0, 1.0)),),
    doc="Engine 2 editor snapping state (grid, angle and scale snapping).",
)

_ASSET_ROOT = RecordSchema("asset_root", ((F("root", TEXT, "."),),), singleton=True,
                           doc="Directory searched for references not found next to the scene file.")

_SCENE_GRAPH = RecordSchema(
    "scene_graph", ((),),
    keys=(F("inheritedTransforms", FLAG, True), F("keepWorldTransformOnReparent", FLAG, True),
          F("dragReparenting", FLAG, True), F("packedSceneOverrides", FLAG, True),
          F("transformSpace", Name("global", "local", strict=False), "global")),
    singleton=True,
    doc="Scene-tree behaviour: whether a node parented to another node inherits its transform.",
)

_PREFAB_OVERRIDE = RecordSchema(
    "prefab_override", ((F("node", TEXT),),),
    keys=(F("property", TEXT, ""), F("value", TEXT, "")),
    doc="A prefab instance's override of one property of the node at #0 (Engine 2 editor state).",
)

_EDITOR_UX = RecordSchema(
    "editor_ux", ((),),
    keys=(F("multiSelect", FLAG, True), F("copyPaste", FLAG, True), F("duplicate", FLAG, True),
          F("transformLocalSpace", FLAG, False), F("selectionFilters", FLAG, True),
          F("strongUndoGrouping", FLAG, True), F("selectionFilterKinds", TEXT_LIST, ())),
    doc="Engine 2 editor preferences (selection, copy/paste, undo grouping).",
)

_RENDER_BAKE = RecordSchema(
    "render_bake", ((),),
    keys=(F("probeCaptureOnSave", FLAG, False), F("lightmapBakeEnabled", FLAG, False),
          F("irradianceBakeEnabled", FLAG, False), F("renderDiagnostics", FLAG, False),
          F("lightmapResolution", INT, 1024), F("probeCubemapSize", INT, 256),
          F("outputDirectory", TEXT, "bakes")),
    doc="Engine 2 offline bake settings (probes, lightmaps, irradiance).",
)

_ENV_HEAD = (
    F("background", VEC3, (0.38, 0.38, 0.38)), F("ambient", VEC3, (0.15, 0.16, 0.20)),
    F("fogDensity", NUMBER, 0.0), F("shadows", FLAG, True), F("grid", FLAG, True),
    F("gridSize", NUMBER, 10.0),
)
_ENVIRONMENT = RecordSchema(
    "environment",
    (_ENV_HEAD + (F("environmentMap", TEXT, ""),), _ENV_HEAD),
    keys=(
        F("fogColor", COLOR, (0.55, 0.60, 0.68, 1.0)),
        F("exposure", NUMBER, 1.0), F("gamma", NUMBER, 2.2),
        F("bloomIntensity", NUMBER, 0.0), F("bloomThreshold", NUMBER, 0.82), F("bloomRadius", NUMBER, 4.0),
        F("shadowMapSize", INT, 2048), F("shadowedLightBudget", INT, 1),
        F("backgroundMode", Name("plain_color", "hdr", "rayrai_sky",
                                 aliases={"plain": "plain_color", "color": "plain_color",
                                          "clear_color": "plain_color", "solid": "plain_color",
                                          "environment": "hdr", "environment_map": "hdr", "cubemap": "hdr",
                                          "rayraisky": "rayrai_sky", "rayrai": "rayrai_sky",
                                          "sky": "rayrai_sky", "procedural_sky": "rayrai_sky"}),
          "plain_color"),
        F("colorMode", COLOR_MODE, "unreal_preview"),
        F("pbrEnvironmentLightingTint", COLOR, (1.0, 1.0, 1.0, 1.0)),
        F("pbrEnvironmentIntensity", NUMBER, 1.0),
        F("fxaa", FLAG, True), F("ssao", FLAG, True),
        F("heightFogEnabled", FLAG, False), F("heightFogDensity", NUMBER, 0.0),
        F("heightFogBaseHeight", NUMBER, 0.0), F("heightFogFalloff", NUMBER, 0.35),
    ),
    singleton=True,
    doc="Background, ambient light, fog, shadows and post-processing (rayrai render settings).",
)

_WEATHER = RecordSchema(
    "weather",
    ((F("enabled", FLAG, True),), ()),
    keys=(
        F("preset", Name("clear", "hazy", "overcast", "fog", "rain", "heavy_rain", "snow", "storm",
                         "night_clear", "night_rain", "custom"), "clear"),
        # The older document's example writes quality=balanced, a name the newer one does not list.
        F("quality", Name("low", "medium", "high", "ultra", strict=False), "high"),
        F("seed", INT, 1), F("timeOfDay", NUMBER, 13.0), F("latitude", NUMBER, 37.0),
        F("longitude", NUMBER, 127.0), F("year", INT, 2026), F("month", INT, 5), F("day", INT, 8),
        F("windDirection", VEC3, (1.0, 0.25, 0.0)), F("windSpeed", NUMBER, 1.5),
        F("transitionSeconds", NUMBER, 0.0), F("affectSensors", FLAG, False),
        F("cloudCoverage", NUMBER, 0.05), F("cloudDensity", NUMBER, 0.05),
        F("precipitationRate", NUMBER, 0.0), F("rainOcclusionStrength", NUMBER, 0.0),
        F("fogDensity", NUMBER, 0.0), F("visibilityMeters", NUMBER, 10000.0),
        F("fogColor", COLOR, (0.72, 0.80, 0.90, 1.0)), F("fogAnisotropy", NUMBER, 0.0),
        F("humidity", NUMBER, 0.35), F("wetness", NUMBER, 0.0),
        F("wetnessAccumulationEnabled", FLAG, True), F("wetnessAccumulationRate", NUMBER, 0.35),
        F("wetnessDryingRate", NUMBER, 0.1), F("snowCoverage", NUMBER, 0.0),
        F("lightningRate", NUMBER, 0.0), F("lightningLocalPointLightEnabled", FLAG, True),
        F("lightningLocalPointDistance", NUMBER, 18.0), F("lightningLocalPointRadius", NUMBER, 28.0),
        F("lightningLocalPointIntensity", NUMBER, 2.2), F("thunderSpeedOfSound", NUMBER, 343.0),
        F("airTurbidity", NUMBER, 2.0), F("groundAlbedo", NUMBER, 0.35),
        F("useExplicitSunAngles", FLAG, False), F("sunAzimuthDegrees", NUMBER, 180.0),
        F("sunElevationDegrees", NUMBER, 42.0), F("sunDiskSize", NUMBER, 0.018),
        F("moonDiskSize", NUMBER, 0.014), F("cloudAltitudeMeters", NUMBER, 850.0),
        F("cloudThicknessMeters", NUMBER, 180.0), F("cloudShadowStrength", NUMBER, 0.04),
        F("cloudScale", NUMBER, 0.18), F("cloudAnimationSpeed", NUMBER, 0.0),
        F("lensDropletsEnabled", FLAG, False), F("lensDropletStrength", NUMBER, 1.0),
    ),
    singleton=True,
    doc="rayrai sky: time of day, sun, clouds, precipitation and lightning (WeatherSettings).",
)

_RAYRAI_RENDER = RecordSchema(
    "rayrai_render", ((),),
    keys=(
        F("preset", Name("fast", "balanced", "high", "ultra", "custom",
                         aliases={"low": "fast", "medium": "balanced"}), "ultra"),
        F("custom", FLAG, False), F("colorMode", COLOR_MODE, "unreal_preview"),
        F("shadowResolution", INT, 2048), F("shadowBias", NUMBER, 0.0008), F("shadowStrength", NUMBER, 0.6),
        F("viewerMsaaSamples", INT, 0), F("textureAnisotropy", NUMBER, 0.0),
        F("shadowPcfRadius", NUMBER, 1.25),
        F("directionalShadowCascadeCount", INT, 1), F("directionalShadowCascadeLambda", NUMBER, 0.7),
        F("directionalShadowCascadeMaxDistance", NUMBER, 0.0),
        F("highFidelityPbr", FLAG, False), F("pbrToneMapping", FLAG, False), F("pbrExposure", NUMBER, 1.0),
        # These three replace the value set so far only when present: no default.
        F("pbrEnvironmentIntensity", NUMBER, None), F("addViewerFillLights", FLAG, None),
        F("reflectiveGround", FLAG, None),
        F("autoExposure", FLAG, False), F("autoExposureKey", NUMBER, 0.18),
        F("autoExposureSpeed", NUMBER, 0.05),
        F("volumetricFog", FLAG, False), F("volumetricFogDensity", NUMBER, 0.0),
        F("volumetricLightStrength", NUMBER, 0.0),
        F("contactShadows", FLAG, False), F("contactShadowsLength", NUMBER, 0.12),
        F("contactShadowsStrength", NUMBER, 0.7),
        F("screenSpaceReflections", FLAG, False), F("screenSpaceReflectionStrength", NUMBER, 0.0),
        F("motionBlur", FLAG, False), F("motionBlurDirection", VEC2, (0.0, 0.0)),
        F("motionBlurStrength", NUMBER, 0.0),
        F("depthOfField", FLAG, False), F("depthOfFieldFocusDistance", NUMBER, 5.0),
        F("depthOfFieldAperture", NUMBER, 0.0),
        F("diagnostics", FLAG, False),
    ),
    singleton=True,
    doc="rayrai quality preset and, with custom=true, the renderer settings applied over it.",
)

# ---------------------------------------------------------------------------------------------------------
# Resources

_MATERIAL_HEAD = (
    F("name", TEXT), F("color", RGBA, (0.55, 0.62, 0.72, 1.0)), F("metallic", NUMBER, 0.0),
    F("roughness", NUMBER, 0.55),
)
_MATERIAL = RecordSchema(
    "material",
    (
        _MATERIAL_HEAD + (
            F("emissive", VEC3, (0.0, 0.0, 0.0)), F("emissiveStrength", NUMBER, 0.0),
            F("doubleSided", FLAG, False),
            F("albedoTexture", TEXT, ""), F("normalTexture", TEXT, ""), F("metallicTexture", TEXT, ""),
            F("roughnessTexture", TEXT, ""), F("aoTexture", TEXT, ""), F("emissiveTexture", TEXT, "")),
        _MATERIAL_HEAD,
    ),
    keys=(
        F("id", TEXT, _same_as("name"), "identifier objects, terrains and assets reference"),
        F("type", Name("pbr", strict=False), "pbr"),
        F("metallicRoughnessTexture", TEXT, ""),
        F("uvScale", VEC2, (1.0, 1.0)), F("uvOffset", VEC2, (0.0, 0.0)), F("uvRotation", NUMBER, 0.0),
        F("textureAnisotropy", NUMBER, 1.0),
        F("alphaMode", Name("opaque", "mask", "hash", "blend",
                            aliases={"masked": "mask", "alpha_scissor": "mask", "alpha_hash": "hash",
                                     "transparent": "blend"}), "opaque"),
        F("alphaCutoff", NUMBER, 0.5),
        F("useVertexColorAsAlbedo", FLAG, False), F("vertexColorIsSrgb", FLAG, False),
        F("textureBlendFactor", NUMBER, 0.0), F("ao", NUMBER, 1.0),
        F("blendMode", Name("mix", "add", "subtract", "multiply", "premultiplied_alpha",
                            aliases={"additive": "add", "sub": "subtract", "mul": "multiply",
                                     "premultiplied": "premultiplied_alpha",
                                     "premul": "premultiplied_alpha"}), "mix"),
        F("renderPriority", NUMBER, 0.0), F("alphaHashScale", NUMBER, 1.0),
        F("alphaAntialiasing", Name("off", "alpha_to_coverage", "alpha_to_coverage_and_to_one",
                                    aliases={"coverage": "alpha_to_coverage",
                                             "coverage_to_one": "alpha_to_coverage_and_to_one"}), "off"),
        F("alphaAntialiasingEdge", NUMBER, 0.3),
        F("distanceFadeMode", Name("disabled", "pixel_alpha", "pixel_dither", "object_dither",
                                   aliases={"alpha": "pixel_alpha", "dither": "pixel_dither"}), "disabled"),
        F("distanceFadeMin", NUMBER, 0.0), F("distanceFadeMax", NUMBER, 0.0),
        F("proximityFadeEnabled", FLAG, False), F("proximityFadeDistance", NUMBER, 1.0),
        F("normalStrength", NUMBER, 1.0), F("normalConvention", Name("opengl", "directx"), "opengl"),
        F("aoStrength", NUMBER, 1.0), F("aoLightAffect", NUMBER, 0.0),
        F("emissionOperator", Name("multiply", "add"), "multiply"),
        F("specularFactor", NUMBER, 1.0), F("specularColor", COLOR, (1.0, 1.0, 1.0, 1.0)),
        F("diffuseMode", Name("lambert", "burley", "lambert_wrap", "toon", aliases={"wrap": "lambert_wrap"}),
          "lambert"),
        F("specularMode", Name("schlick_ggx", "toon", "disabled",
                               aliases={"off": "disabled", "none": "disabled"}), "schlick_ggx"),
        F("ior", NUMBER, 1.5), F("transmission", NUMBER, 0.0),
        F("cullMode", Name("back", "front", "disabled", strict=False), "back"),
        F("textureBlendTexture", TEXT, ""),
        F("bentNormalStrength", NUMBER, 1.0), F("ormTexture", TEXT, ""),
    ) + _texture_transform("albedo") + _texture_transform("normal") + _texture_transform("metallicRoughness"),
    doc="A PBR material: base color (the RaiSim appearance), rayrai shading, textures.",
)

_CONTACT_MATERIAL = RecordSchema(
    "contact_material",
    ((F("materialA", TEXT), F("materialB", TEXT), F("friction", NUMBER, 0.8), F("restitution", NUMBER, 0.0),
      F("restitutionThreshold", NUMBER, 0.001), F("staticFriction", NUMBER, 0.8),
      F("staticFrictionVelocityThreshold", NUMBER, 0.001), F("rollingFriction", NUMBER, 0.0),
      F("spinningFriction", NUMBER, 0.0)),),
    keys=(F("id", TEXT, ""),),
    doc="Contact properties of a pair of RaiSim materials (World::setMaterialPairProp).",
)

_TERRAIN_TEXTURE = RecordSchema(
    "terrain_texture",
    ((F("slot", INT), F("id", TEXT), F("name", TEXT, "")),),
    keys=(
        F("color", COLOR4, (0.28, 0.43, 0.20, 1.0)),
        F("albedo", TEXT, ""), F("normal", TEXT, ""),
        F("uvScale", NUMBER, 4.0), F("normalDepth", NUMBER, 1.0), F("aoStrength", NUMBER, 1.0),
        F("roughness", NUMBER, 0.82), F("detile", VEC2, (0.0, 0.0)), F("displacement", VEC2, (0.0, 1.0)),
        # displacement textures, written only when set: the first non-empty of these counts
        F("displacementTexture", TEXT, ""), F("displacementMap", TEXT, ""), F("height", TEXT, ""),
        F("heightTexture", TEXT, ""), F("heightmapTexture", TEXT, ""), F("disp", TEXT, ""),
    ),
    doc="A terrain texture layer (slot): tint, albedo, normal and displacement textures.",
)

_ASSET = RecordSchema(
    "asset",
    ((F("name", TEXT), F("primitive", ANY_PRIMITIVE, "mesh"), F("mesh", TEXT, "")),),
    keys=(
        F("id", TEXT, _same_as("name")), F("defaultMaterial", TEXT, "engine_default"),
        F("contactMaterial", TEXT, "default"), F("collisionPath", TEXT, ""),
        F("bodyMode", BODY_MODE, "dynamic"), F("mass", NUMBER, 1.0), F("scale", VEC3, (1.0, 1.0, 1.0)),
        F("quat", QUAT, (1.0, 0.0, 0.0, 0.0)), F("collidable", FLAG, True), _COLLISION_MODE,
        F("importSource", TEXT, ""), F("importer", TEXT, ""), F("autoReimport", FLAG, False),
        F("generateCollision", FLAG, False), F("generatedCollision", TEXT, ""),
        F("remapMaterials", FLAG, False), F("importScale", NUMBER, 1.0), F("importUpAxis", TEXT, "z"),
        F("importFlipWinding", FLAG, False), F("importRecenter", FLAG, False),
        F("importApplyRootScale", FLAG, False), F("materialRemaps", TEXT_LIST, ()),
        F("importWarnings", TEXT, ""), F("sourceTimestamp", NUMBER, 0.0), F("sidecarTimestamp", NUMBER, 0.0),
    ) + _MESH_COLLISION_KEYS,
    doc="An importable asset of the Engine 2 library (creates nothing; its defaultMaterial matters).",
)

_ARTICULATED_RESOURCE = RecordSchema(
    "articulated_resource",
    ((F("id", TEXT), F("name", TEXT, ""), F("sourcePath", TEXT, "")),),
    keys=(F("resourceDirectory", TEXT, ""), F("modules", TEXT_LIST, ()), F("jointOrder", TEXT_LIST, ()),
          F("doNotCollideWithParent", FLAG, True), F("convexifyCollisionMeshes", FLAG, False)),
    doc="A URDF/MJCF resource that articulated records instantiate (by resourceId).",
)

# ---------------------------------------------------------------------------------------------------------
# Scene tree

_GROUP = RecordSchema(
    "group", ((F("path", TEXT),),),
    keys=(F("id", TEXT, default_id("folder_")), F("parentId", TEXT, ""), F("visible", FLAG, True),
          F("locked", FLAG, False), F("expanded", FLAG, True)),
    id_prefix="folder_",
    doc="A folder of the scene tree; carries no transform.",
)

_TERRAIN_REGION = RecordSchema(
    "terrain_region",
    ((F("path", TEXT), F("xSamples", INT), F("ySamples", INT), F("xSize", NUMBER), F("ySize", NUMBER),
      F("center", VEC3, (0.0, 0.0, 0.0))),),
    keys=_node_keys("terrain_") + (
        F("location", VEC2, (0.0, 0.0)),  # ignored by the readers
        F("material", TEXT, "engine_default"), F("contactMaterial", TEXT, "default"),
        F("baseTexture", INT, 0),
        F("visible", FLAG, True), F("collidable", FLAG, True),
        F("castShadow", FLAG, True), F("receiveShadow", FLAG, True),
        F("sourceKind", Name("samples", aliases={"height_samples": "samples", "inline": "samples"},
                             strict=False), "samples"),
        # ignored by the readers; example values of the older document
        F("sourcePath", TEXT, ""), F("cloneSource", TEXT, ""),
        F("pngHeightScale", NUMBER, 1.0), F("pngHeightOffset", NUMBER, 0.0),
        F("proceduralFrequency", NUMBER, 0.1), F("proceduralZScale", NUMBER, 2.0),
        F("proceduralOctaves", INT, 5), F("proceduralLacunarity", NUMBER, 2.0),
        F("proceduralGain", NUMBER, 0.5), F("proceduralStepSize", NUMBER, 0.0),
        F("proceduralHeightOffset", NUMBER, 0.0), F("proceduralSeed", INT, 5489),
        F("lodLevels", INT, 7), F("collisionShapeSize", INT, 64),
        F("textureSplattingEnabled", FLAG, True),
        F("heights", LIST, _EMPTY_LIST, "xSamples*ySamples heights, heights[y*xSamples+x]; empty: all 0"),
        F("texturePrimary", BYTE_LIST, _EMPTY_BYTE_LIST, "per-sample slot; empty: the base slot"),
        F("textureSecondary", BYTE_LIST, _EMPTY_BYTE_LIST, "per-sample slot; empty: the base slot"),
        F("textureBlend", LIST, _EMPTY_LIST, "per-sample blend primary->secondary; empty: all 0"),
        F("wetness", LIST, _EMPTY_LIST), F("holes", BYTE_LIST, _EMPTY_BYTE_LIST),
        F("vertexColors", COLOR_LIST, _EMPTY_COLOR_LIST, "per-sample color multiplier; empty: all white"),
    ),
    id_prefix="terrain_",
    doc="A sampled height map (static RaiSim height map) with its per-sample paint.",
)

_TERRAIN_SPLAT_LAYER = RecordSchema(
    "terrain_splat_layer", ((F("terrain", TEXT),),),
    keys=(F("slot", INT, 0), F("enabled", FLAG, True), F("strength", NUMBER, 1.0),
          F("weights", LIST, _EMPTY_LIST, "one weight per sample; empty: 1 for the base slot, else 0")),
    parent=("terrain_region", "terrain"),
    doc="A weighted texture layer of the terrain named at #0 (which must come first).",
)

_TERRAIN_FOLIAGE_LAYER = RecordSchema(
    "terrain_foliage_layer", ((F("terrain", TEXT),),),
    keys=(
        F("id", TEXT, "", "default foliage_<n> (the layer's index), which needs the scene"),
        F("name", TEXT, _same_as("id")), F("enabled", FLAG, True),
        F("primitive", Name("mesh", "box", "sphere", "cylinder", "capsule", strict=False), "mesh"),
        F("meshPath", TEXT, ""),
        F("size", VEC3, (0.25, 0.25, 0.65)), F("colorA", COLOR4, (0.18, 0.42, 0.16, 1.0)),
        F("colorB", COLOR4, (0.42, 0.64, 0.24, 1.0)),
        F("density", LIST, _EMPTY_LIST, "per-sample density in [0, 1]; empty: all 0"),
        F("densityPerSquareMeter", NUMBER, 1.0), F("maxInstances", INT, 20000),
        F("minScale", NUMBER, 0.8), F("maxScale", NUMBER, 1.25),
        F("randomYawDegrees", NUMBER, 180.0), F("randomPitchDegrees", NUMBER, 0.0),
        F("randomRollDegrees", NUMBER, 0.0), F("alignToNormal", FLAG, False),
        F("minHeight", NUMBER, -1e6), F("maxHeight", NUMBER, 1e6),
        F("minSlopeDegrees", NUMBER, 0.0), F("maxSlopeDegrees", NUMBER, 90.0),
    ) + _instancing((True, False, True, 0, 1, True, False, True, 1.5, 8)) + (
        F("seed", INT, 1),
        F("foliageRootHeight", NUMBER, 0.0), F("foliageTipHeight", NUMBER, 1.0),
        F("foliageWindStrength", NUMBER, 0.65), F("foliageStiffness", NUMBER, 0.55),
        F("foliageFlutterWeight", NUMBER, 0.6),
    ),
    parent=("terrain_region", "terrain"),
    doc="Plants or rocks scattered over the terrain named at #0 (which must come first).",
)

# ---------------------------------------------------------------------------------------------------------
# Nodes

_LIGHT = RecordSchema(
    "light",
    ((F("path", TEXT), F("direction", VEC3, (0.0, 0.0, -1.0)), F("intensity", NUMBER, 1.0)),),
    keys=_node_keys("light_") + (
        F("type", Name("directional", "point", "spot", "area", aliases={"sun": "directional"}),
          "directional"),
        F("visible", FLAG, True),
        F("position", VEC3, (0.0, 0.0, 3.0)), F("quat", QUAT, (1.0, 0.0, 0.0, 0.0)),
        F("color", COLOR, (1.0, 1.0, 1.0, 1.0)), F("ambientColor", COLOR, (0.0, 0.0, 0.0, 1.0)),
        F("specularColor", COLOR, (1.0, 1.0, 1.0, 1.0)), F("specularIntensity", NUMBER, 1.0),
        F("attenuationConstant", NUMBER, 1.0), F("attenuationLinear", NUMBER, 0.04),
        F("attenuationQuadratic", NUMBER, 0.012), F("range", NUMBER, None),
        F("coneAngle", NUMBER, 30.0), F("innerConeAngle", NUMBER, 18.0), F("radius", NUMBER, 0.0),
        F("areaSize", VEC3, (1.0, 1.0, 0.0)), F("areaRight", VEC3, (1.0, 0.0, 0.0)),
        F("areaUp", VEC3, (0.0, 1.0, 0.0)),
        F("projectorTexture", TEXT, ""), F("projectorStrength", NUMBER, 0.0),
        F("projectorUvScale", VEC2, (1.0, 1.0)), F("projectorUvOffset", VEC2, (0.0, 0.0)),
        F("negative", FLAG, False), F("temperatureEnabled", FLAG, False), F("shadows", FLAG, True),
        F("colorTemperature", NUMBER, 6500.0),
        F("distanceFadeEnabled", FLAG, False), F("distanceFadeBegin", NUMBER, 40.0),
        F("distanceFadeShadow", NUMBER, 50.0), F("distanceFadeLength", NUMBER, 10.0),
        F("shadowResolution", INT, 2048), F("shadowBias", NUMBER, 0.0008),
        F("shadowStrength", NUMBER, 0.85), F("shadowPcfRadius", NUMBER, 1.25),
        F("shadowOrthoHalfSize", NUMBER, 5.0), F("shadowNear", NUMBER, 0.1), F("shadowFar", NUMBER, 30.0),
        F("shadowCenter", VEC3, (0.0, 0.0, 0.0)), F("shadowPosition", VEC3, (0.0, 0.0, 0.0)),
        F("shadowUseCustomPosition", FLAG, False),
    ),
    id_prefix="light_",
    doc="A directional, point, spot or area light; the direction is the way the light travels.",
)

_CAMERA = RecordSchema(
    "camera",
    ((F("path", TEXT),) + _POSE + (
        F("verticalFov", NUMBER, 60.0), F("near", NUMBER, 0.05), F("far", NUMBER, 100.0),
        F("width", INT, 1280), F("height", INT, 800), F("renderMode", TEXT, "rgb"),
        F("enabled", FLAG, True)),),
    keys=_node_keys("camera_") + (
        F("projection", Name("perspective", "orthographic", strict=False), "perspective"),
        F("horizontalFov", NUMBER, 0.0, "degrees; 0: derived from verticalFov and the aspect ratio"),
        F("orthoScale", NUMBER, 10.0),
        F("previewPostProcessing", FLAG, True), F("previewExposure", NUMBER, 1.0),
        F("previewGamma", NUMBER, 2.2), F("previewDepthOfField", FLAG, False),
        F("previewFocusDistance", NUMBER, 5.0), F("previewAperture", NUMBER, 0.0),
        F("outputPath", TEXT, ""),
    ),
    id_prefix="camera_",
    doc="A camera; it looks along its local +x with local +z up (degrees, metres, pixels).",
)

_OBJECT_HEAD = (
    F("path", TEXT), F("primitive", PRIMITIVE),
    F("position", VEC3, (0.0, 0.0, 0.0)), F("quaternion", QUAT, (1.0, 0.0, 0.0, 0.0)),
    F("scale", VEC3, (1.0, 1.0, 1.0)), F("radius", NUMBER, 0.5), F("height", NUMBER, 1.0),
    F("mass", NUMBER, 1.0), F("contactMaterial", TEXT, "default"), F("material", TEXT, "engine_default"),
)

_OBJECT = RecordSchema(
    "object",
    (
        _OBJECT_HEAD + (
            F("visualOnly", FLAG, False), F("visible", FLAG, True), F("locked", FLAG, False),
            F("mesh", TEXT, ""), F("bodyMode", BODY_MODE, _object_body_mode),
            F("collidable", FLAG, True), F("collisionGroup", GROUP, 1),
            F("collisionMask", GROUP, ALL_GROUPS)),
        _OBJECT_HEAD + (F("visible", FLAG, True), F("fixed", FLAG, False)),
        _OBJECT_HEAD,
    ),
    keys=_node_keys("object_") + (F("assetId", TEXT, ""),) + _SEGMENTATION_KEYS + (
        F("materialRemaps", TEXT_LIST, (), "source:target items"),
        F("renderMeshPath", TEXT, ""), F("collisionMeshPath", TEXT, ""), _COLLISION_MODE,
        F("castShadow", FLAG, True), F("receiveShadow", FLAG, True),
        # rayrai visual settings; their defaults are raisin::Visuals' (not given by the documents)
        F("visualUseMeshColor", FLAG, False), F("visualFlatShading", FLAG, False),
        F("visualTwoSided", FLAG, False), F("visualDetectable", FLAG, True),
        F("visualShadowCasting", Name("inherit", "on", "off", "double_sided", "shadows_only"), "inherit"),
        F("visualTransparency", NUMBER, 0.0),
        F("visualRangeBegin", NUMBER, 0.0), F("visualRangeEnd", NUMBER, 0.0),
        F("visualRangeBeginMargin", NUMBER, 0.0), F("visualRangeEndMargin", NUMBER, 0.0),
        F("visualRangeFade", Name("disabled", "self", "dependencies"), "disabled"),
        F("visualAutomaticMeshLod", FLAG, True), F("visualAutomaticMeshLodBias", NUMBER, 1.0),
        F("visualCustomBounds", FLAG, False), F("visualCustomBoundsCenter", VEC3, (0.0, 0.0, 0.0)),
        F("visualCustomBoundsRadius", NUMBER, 0.0), F("visualTransparentSortOffset", NUMBER, 0.0),
        F("visualTransparentSortUsesBoundsCenter", FLAG, False), F("visualMaterialOverlay", TEXT, ""),
    ) + _MESH_COLLISION_KEYS,
    id_prefix="object_",
    doc="A ground, box, sphere, cylinder, capsule or mesh body (or a visual-only object).",
)

_COMPOUND = RecordSchema(
    "compound",
    ((F("path", TEXT),) + _POSE_SCALE + (
        F("mass", NUMBER, 1.0), F("bodyMode", BODY_MODE, "dynamic"), F("visible", FLAG, True),
        F("collidable", FLAG, True)),),
    keys=_node_keys("compound_") + (
        F("centerOfMass", VEC3, (0.0, 0.0, 0.0)), F("inertiaDiagonal", VEC3, (0.0, 0.0, 0.0)),
    ) + _COLLISION_FILTER_KEYS + _SEGMENTATION_KEYS,
    id_prefix="compound_",
    doc="A rigid body made of the primitive shapes of the compound_child records that follow it.",
)

_COMPOUND_CHILD = RecordSchema(
    "compound_child",
    ((F("compound", TEXT), F("primitive", ANY_PRIMITIVE)) + _POSE_SCALE,),
    keys=(F("size", VEC3, (1.0, 1.0, 1.0)), F("radius", NUMBER, 0.5), F("height", NUMBER, 1.0),
          F("contactMaterial", TEXT, "default"), F("material", TEXT, "engine_default")),
    parent=("compound", "compound"),
    doc="One shape of the compound at #0, posed in the compound's frame.",
)

_DEFORMABLE = RecordSchema(
    "deformable",
    # The example also writes a key ``scale=1``; it shares the positional scale's name, so it stays raw.
    ((F("path", TEXT), F("kind", Name("cloth", "mass_spring", "fem", strict=False), "cloth"),
      F("meshPath", TEXT, "")) + _POSE_SCALE,),
    keys=_node_keys("deformable_") + (
        F("pinnedVertices", INT_LIST, _EMPTY_INT_LIST), F("totalMass", NUMBER, 1.0),
        F("distanceCompliance", NUMBER, 0.0), F("distanceStiffness", NUMBER, 1000.0),
        F("bendCompliance", NUMBER, 0.0), F("bendStiffness", NUMBER, 100.0),
        F("youngsModulus", NUMBER, 0.0), F("poissonRatio", NUMBER, 0.3), F("thickness", NUMBER, 0.002),
        F("damping", NUMBER, 0.01), F("collisionRadius", NUMBER, 0.01), F("iterations", INT, 20),
        F("substeps", INT, 1), F("solverMode", Name("xpbd", strict=False), "xpbd"),
        F("particleMode", Name("skinned", strict=False), "skinned"), F("particleSpacing", NUMBER, 0.05),
        F("contactMaterial", TEXT, "default"), F("material", TEXT, "engine_default"),
        F("visible", FLAG, True), F("collidable", FLAG, True),
    ) + _COLLISION_FILTER_KEYS,
    id_prefix="deformable_",
    doc="A soft body (cloth, mass-spring or FEM) from a mesh (example values as defaults).",
)

_GRANULAR = RecordSchema(
    "granular",
    ((F("path", TEXT), F("kind", Name("particles", strict=False), "particles")) + _POSE_SCALE,),
    keys=_node_keys("granular_") + (
        F("positions", VEC3_LIST, _EMPTY_VEC3_LIST, "per-particle x,y,z; if not empty, no box fill"),
        F("radii", LIST, _EMPTY_LIST),
        F("boxMin", VEC3, (-0.5, -0.5, 0.0)), F("boxMax", VEC3, (0.5, 0.5, 0.3)),
        F("radius", NUMBER, 0.01), F("spacing", NUMBER, 0.025), F("maxParticles", INT, 20000),
        F("velocity", VEC3, (0.0, 0.0, 0.0)), F("angularVelocity", VEC3, (0.0, 0.0, 0.0)),
        F("materialId", INT, 0), F("fixed", FLAG, False), F("density", NUMBER, 1600.0),
        F("normalStiffness", NUMBER, 1e6), F("normalDamping", NUMBER, 200.0),
        F("tangentialStiffness", NUMBER, 1e5), F("tangentialDamping", NUMBER, 20.0),
        F("friction", NUMBER, 0.6), F("rollingFriction", NUMBER, 0.05),
        F("cohesionStiffness", NUMBER, 0.0), F("cohesionMaxDistance", NUMBER, 0.0),
        F("normalContactModel", Name("hertz", strict=False), "hertz"), F("substeps", INT, 2),
        F("visible", FLAG, True),
    ),
    id_prefix="granular_",
    doc="A particle system, given per particle or as a box filled at load (example values as defaults).",
)

_ARTICULATED = RecordSchema(
    "articulated",
    ((F("path", TEXT), F("resourceId", TEXT)) + _POSE
     + (F("visible", FLAG, True), F("collidable", FLAG, True)),),
    keys=_node_keys("articulated_") + (
        F("sourcePath", TEXT, ""), F("resourceDirectory", TEXT, ""), F("modules", TEXT_LIST, ()),
        F("jointOrder", TEXT_LIST, ()), F("scale", VEC3, (1.0, 1.0, 1.0)),
        F("doNotCollideWithParent", FLAG, True), F("convexifyCollisionMeshes", FLAG, False),
    ) + _COLLISION_FILTER_KEYS + (
        F("generalizedCoordinate", LIST, _EMPTY_LIST), F("generalizedVelocity", LIST, _EMPTY_LIST),
    ) + _SEGMENTATION_KEYS,
    id_prefix="articulated_",
    doc="An instance of an articulated_resource (URDF/MJCF robot) with its state.",
)

_ARTICULATED_IK = RecordSchema(
    "articulated_ik",
    ((F("articulated", TEXT), F("frame", TEXT), F("target", PACKED_VEC3, (0.0, 0.0, 0.0))),),
    keys=(
        F("enabled", FLAG, True), F("useOrientation", FLAG, False),
        F("orientation", QUAT, (1.0, 0.0, 0.0, 0.0)), F("maxIterations", INT, 80),
        F("positionTolerance", NUMBER, 0.001), F("orientationTolerance", NUMBER, 0.01),
        F("orientationWeight", NUMBER, 0.5), F("damping", NUMBER, 0.05), F("stepSize", NUMBER, 0.5),
        F("maxStep", NUMBER, 0.1), F("svdTolerance", NUMBER, 1e-6), F("finiteDifferenceStep", NUMBER, 1e-4),
        F("applyBestOnFailure", FLAG, True), F("enforceJointLimits", FLAG, True),
        F("inverseMethod", Name("damped_least_squares", strict=False), "damped_least_squares"),
        F("transposeGain", NUMBER, 0.0),
    ),
    parent=("articulated", "articulated"),
    doc="An IK target (frame, position, optional orientation) of the articulated system at #0.",
)

_SENSOR = RecordSchema(
    "sensor",
    ((F("path", TEXT),
      F("kind", Name("rgb", "depth", "rgb_depth", "segmentation", "lidar", "imu", "force_torque",
                     strict=False), "rgb"),
      F("parent", TEXT, "", "id or path of the body the sensor is mounted on")) + _POSE,),
    keys=_node_keys("sensor_") + (
        F("parentLink", TEXT, "", "link of an articulated parent"),
        F("width", INT, 640), F("height", INT, 480), F("updateRate", NUMBER, 30.0, "Hz"),
        F("verticalFov", NUMBER, 60.0, "degrees"), F("horizontalFov", NUMBER, 0.0, "degrees; 0: derived"),
        F("nearPlane", NUMBER, 0.05), F("farPlane", NUMBER, 100.0),
        # 0 is what Engine 2 writes for a sensor that is not a lidar
        F("lidarChannels", INT, 0), F("lidarSamples", INT, 0, "samples per revolution"),
        F("lidarMinRange", NUMBER, 0.0), F("lidarMaxRange", NUMBER, 0.0),
        F("lidarVerticalFov", NUMBER, 0.0, "degrees"),
        F("segmentation", FLAG, False),
        F("calibrationFx", NUMBER, 0.0, "pixels; 0: derived from the field of view"),
        F("calibrationFy", NUMBER, 0.0), F("calibrationCx", NUMBER, 0.0), F("calibrationCy", NUMBER, 0.0),
        F("noiseMean", NUMBER, 0.0), F("noiseStddev", NUMBER, 0.0), F("noiseSeed", INT, 0),
        F("enabled", FLAG, True), F("outputPath", TEXT, ""),
    ),
    id_prefix="sensor_",
    doc="A camera, depth camera, lidar or IMU mounted on a node (creates nothing in RaiSim).",
)

_WIRE = RecordSchema(
    "wire",
    ((F("path", TEXT),
      F("kind", Name("stiff", "compliant", "custom",
                     aliases={"stiff_wire": "stiff", "soft": "compliant", "compliant_wire": "compliant",
                              "custom_wire": "custom"}), "stiff"),
      F("bodyA", TEXT), F("bodyB", TEXT), F("length", NUMBER, 1.0)),),
    keys=_node_keys("wire_") + (
        F("localIndexA", INT, 0), F("localIndexB", INT, 0),
        F("localPositionA", VEC3, (0.0, 0.0, 0.0)), F("localPositionB", VEC3, (0.0, 0.0, 0.0)),
        F("stiffness", NUMBER, 1000.0), F("damping", NUMBER, 0.0), F("compliance", NUMBER, 0.0),
        F("visualizationWidth", NUMBER, 0.01), F("enabled", FLAG, True),
    ),
    id_prefix="wire_",
    doc="A stiff, compliant or custom distance constraint (spatial tendon) between two bodies.",
)

_REFLECTION_PROBE = RecordSchema(
    "reflection_probe",
    ((F("path", TEXT), F("position", VEC3, (0.0, 0.0, 0.0)), F("radius", NUMBER, 5.0)),),
    keys=_node_keys("probe_") + (
        F("strength", NUMBER, 1.0), F("boxProjection", FLAG, False),
        F("boxMin", VEC3, (-5.0, -5.0, -5.0)), F("boxMax", VEC3, (5.0, 5.0, 5.0)),
        F("captureOnApply", FLAG, False), F("captureCached", FLAG, True), F("captureFiltered", FLAG, True),
        F("cubemapSize", INT, 256),
        # example values of the older document
        F("captureDrawVisualizationObjects", FLAG, False), F("captureDrawCoordinateFrames", FLAG, False),
        F("captureDrawPointClouds", FLAG, False), F("captureShadows", FLAG, True),
        F("captureEnvironmentBackground", FLAG, True), F("captureEnvironmentExposure", NUMBER, 1.0),
        F("irradianceResolution", INT, 32), F("irradianceSamples", INT, 64),
        F("prefilteredResolution", INT, 128), F("prefilteredMipLevels", INT, 5),
        F("prefilteredSamples", INT, 64), F("brdfLutSize", INT, 128), F("brdfLutSamples", INT, 512),
        F("enabled", FLAG, True),
    ),
    id_prefix="probe_",
    doc="A local reflection probe, optionally box-projected and captured when applied.",
)

_LOCAL_FOG = RecordSchema(
    "local_fog",
    ((F("path", TEXT), F("center", VEC3, (0.0, 0.0, 0.0)), F("radius", NUMBER, 1.0)),),
    keys=_node_keys("fog_") + (
        F("color", COLOR, (0.72, 0.80, 0.90, 1.0)), F("density", NUMBER, 0.12), F("edgeFade", NUMBER, 0.35),
        F("noiseScale", NUMBER, 5.0), F("noiseStrength", NUMBER, 0.55), F("enabled", FLAG, True),
    ),
    id_prefix="fog_",
    doc="A spherical local fog volume.",
)

_PROJECTED_DECAL = RecordSchema(
    "projected_decal",
    ((F("path", TEXT),) + _POSE_SCALE,),
    keys=_node_keys("decal_") + (
        F("halfExtents", VEC3, (0.5, 0.5, 0.5)), F("color", COLOR4, (1.0, 1.0, 1.0, 1.0)),
        F("edgeFade", NUMBER, 0.05), F("normalFade", NUMBER, 0.5), F("upperFade", NUMBER, 0.1),
        F("lowerFade", NUMBER, 0.1),
        F("albedoTexture", TEXT, ""), F("emissionTexture", TEXT, ""), F("normalTexture", TEXT, ""),
        F("ormTexture", TEXT, ""), F("uvScale", VEC2, (1.0, 1.0)), F("uvOffset", VEC2, (0.0, 0.0)),
        F("albedoMix", NUMBER, 1.0), F("emissionEnergy", NUMBER, 0.0), F("normalStrength", NUMBER, 1.0),
        F("ormStrength", NUMBER, 1.0), F("distanceFadeEnabled", FLAG, False),
        F("distanceFadeBegin", NUMBER, 40.0), F("distanceFadeLength", NUMBER, 10.0),
        F("enabled", FLAG, True),
    ),
    id_prefix="decal_",
    doc="A decal projected from a textured box onto the surfaces inside it.",
)

_IRRADIANCE_VOLUME = RecordSchema(
    "irradiance_volume",
    ((F("path", TEXT),) + _POSE_SCALE,),
    keys=_node_keys("ivol_") + (
        F("halfExtents", VEC3, (1.0, 1.0, 1.0)), F("color", COLOR4, (1.0, 1.0, 1.0, 1.0)),
        F("strength", NUMBER, 1.0), F("edgeFade", NUMBER, 0.2), F("normalBias", NUMBER, 0.02),
        F("enabled", FLAG, True),
    ),
    id_prefix="ivol_",
    doc="A box of constant indirect light.",
)

_POINT_CLOUD = RecordSchema(
    "point_cloud", ((F("path", TEXT),),),
    keys=_node_keys("pointcloud_") + (
        F("points", VEC3_LIST, _EMPTY_VEC3_LIST), F("colors", COLOR_LIST, _EMPTY_COLOR_LIST),
        F("pointSize", NUMBER, 2.5),
        F("maxRenderedPoints", INT, 100000), F("renderedPointStride", INT, 1),
        F("detectable", FLAG, False), F("enabled", FLAG, True),
    ),
    id_prefix="pointcloud_",
    doc="A static point cloud (points x,y,z and RGBA colors, ';'-separated).",
)

_INSTANCED_VISUAL = RecordSchema(
    "instanced_visual",
    ((F("path", TEXT), F("primitive", INSTANCE_PRIMITIVE)),),
    keys=_node_keys("instanced_") + (
        F("meshPath", TEXT, ""), F("size", VEC3, (1.0, 1.0, 1.0)),
        F("colorA", COLOR4, (0.55, 0.62, 0.72, 1.0)), F("colorB", COLOR4, (0.35, 0.48, 0.66, 1.0)),
        F("instances", TRANSFORM_LIST, _EMPTY_TRANSFORM_LIST,
          "(N, 10): position x y z, quaternion w x y z, scale x y z"),
        F("colorWeights", LIST, _EMPTY_LIST, "per-instance blend colorA->colorB; missing: 0"),
    ) + _instancing((True, False, False, 0, 1, False, False, False, 2.0, 8), (
        F("shadowFoliageLod", FLAG, False), F("shadowFoliageLodMinRadiusPixels", NUMBER, 2.5),
        F("shadowFoliageLodMaxStride", INT, 16),
    )) + (
        F("grassPatch", FLAG, False), F("terrainBinding", TEXT, ""), F("terrainFoliageLayer", INT, -1),
        F("densityPreview", FLAG, False),
        # scatter and grass authoring keys: ignored by the readers; defaults are the values Engine 2
        # writes for a batch that is not a grass patch (forest scene)
        F("scatterDensityPerSquareMeter", NUMBER, 0.0), F("scatterEraseStrength", NUMBER, 1.0),
        F("scatterRandomScaleMin", NUMBER, 0.8), F("scatterRandomScaleMax", NUMBER, 1.2),
        F("scatterRandomYawDegrees", NUMBER, 180.0),
        F("grassPatchWidth", NUMBER, 0.0), F("grassPatchDepth", NUMBER, 0.0),
        F("grassDensityPerSquareMeter", NUMBER, 0.0), F("grassDrawBudget", INT, 0),
        F("grassMaxDrawDistance", NUMBER, 0.0), F("grassLodFadeStartDistance", NUMBER, 0.0),
        F("grassLodFadeEndDistance", NUMBER, 0.0), F("grassSeed", INT, 0),
        # wind: InstancedVisuals::configureFoliageWind when foliageWindEnabled
        F("grassBladeRootHeight", NUMBER, 0.0), F("grassBladeTipHeight", NUMBER, 1.0),
        F("foliageWindEnabled", FLAG, False), F("grassWindStrength", NUMBER, 1.0),
        F("grassStiffness", NUMBER, 0.35), F("grassFlutterWeight", NUMBER, 0.15),
        F("enabled", FLAG, True),
    ),
    id_prefix="instanced_",
    doc="Render-only instanced copies of one mesh or primitive (10 numbers per instance).",
)

# In section order (schema.SECTION_ORDER).
SCHEMAS: list[RecordSchema] = [
    _HEADER, _TIME_STEP, _GRAVITY, _SOLVER,
    _SNAPPING, _ASSET_ROOT, _SCENE_GRAPH, _PREFAB_OVERRIDE, _EDITOR_UX, _RENDER_BAKE,
    _ENVIRONMENT, _WEATHER, _RAYRAI_RENDER,
    _MATERIAL, _CONTACT_MATERIAL, _TERRAIN_TEXTURE, _ASSET, _ARTICULATED_RESOURCE,
    _GROUP,
    _TERRAIN_REGION, _TERRAIN_SPLAT_LAYER, _TERRAIN_FOLIAGE_LAYER,
    _LIGHT, _CAMERA, _OBJECT, _COMPOUND, _COMPOUND_CHILD, _DEFORMABLE, _GRANULAR,
    _ARTICULATED, _ARTICULATED_IK,
    _SENSOR, _WIRE, _REFLECTION_PROBE, _LOCAL_FOG, _PROJECTED_DECAL, _IRRADIANCE_VOLUME,
    _POINT_CLOUD, _INSTANCED_VISUAL,
]
