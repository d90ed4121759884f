"""Small URDF robots shared by the robot-contact tests (test_link_contacts, test_link_pairs)."""
from rscene_addon.formats import urdf

BOX_M, BOX_SIZE = 2.0, (0.4, 0.3, 0.2)


def box_urdf(m=BOX_M, size=BOX_SIZE, name="box") -> str:
    """One box link of mass ``m`` and full side lengths ``size`` with its exact inertia, on a floating base."""
    sx, sy, sz = size
    ixx, iyy, izz = m * (sy * sy + sz * sz) / 12, m * (sx * sx + sz * sz) / 12, m * (sx * sx + sy * sy) / 12
    return f"""<robot name="{name}">
  <link name="body"><inertial><mass value="{m}"/>
    <inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="{sx} {sy} {sz}"/></geometry></collision></link>
</robot>"""


def read_robot(tmp_path, text, name="robot.urdf"):
    """The robot of URDF ``text``, written to ``tmp_path/name`` first (meshes resolve next to it)."""
    path = tmp_path / name
    path.write_text(text)
    return urdf.read_robot(str(path))
