"""The command's saved fields as NumPy reads them (docs/outputs.md): the members of a ``.npz``
by their names, the files of a ``.npy`` save, each array's dtype and shape ``[height, width]``
or ``[nz, ny, nx]``, on non-square grids. Runs on the CPU backend, in CI."""

import numpy as np


def test_gray_scott_saves_u_and_v_height_by_width(cli, tmp_path):
    cli("grayscott", "--backend", "cpu", "--width", "40", "--height", "24", "--steps", "5",
        "--save", "s.npz", cwd=tmp_path)
    with np.load(tmp_path / "s.npz") as z:
        assert sorted(z.files) == ["u", "v"]
        for name in ("u", "v"):
            assert z[name].dtype == np.float32 and z[name].shape == (24, 40), name
        # U is 1 and V 0 outside the seeds: the arrays are the fields, not transposed.
        assert z["u"].max() == 1.0 and z["v"].min() == 0.0
    cli("grayscott", "--backend", "cpu", "--width", "40", "--height", "24", "--steps", "5",
        "--save", "f.npy", cwd=tmp_path)
    for name in ("u", "v"):
        array = np.load(tmp_path / f"f_{name}.npy")
        assert array.dtype == np.float32 and array.shape == (24, 40), name
        with np.load(tmp_path / "s.npz") as z:
            assert np.array_equal(array, z[name]), name


def test_heat_saves_u_nz_by_ny_by_nx(cli, tmp_path):
    cli("heat", "--backend", "cpu", "--nx", "11", "--ny", "7", "--nz", "5", "--steps", "2",
        "--save", "h.npz", cwd=tmp_path)
    with np.load(tmp_path / "h.npz") as z:
        assert z.files == ["u"]
        assert z["u"].dtype == np.float32 and z["u"].shape == (5, 7, 11)
        # The faces keep the boundary value (0): the first and last plane of each axis.
        u = z["u"]
        assert not u[0].any() and not u[-1].any() and not u[:, 0].any() and not u[:, :, -1].any()
    cli("heat", "--backend", "cpu", "--nx", "11", "--ny", "7", "--nz", "5", "--steps", "2",
        "--save", "h.npy", cwd=tmp_path)
    single = np.load(tmp_path / "h.npy")
    assert single.dtype == np.float32 and single.shape == (5, 7, 11)


def test_physarum_saves_its_trail_and_agents(cli, tmp_path):
    cli("physarum", "--backend", "cpu", "--width", "48", "--height", "32", "--agents", "500",
        "--steps", "3", "--save", "p.npz", "--save-agents", cwd=tmp_path)
    with np.load(tmp_path / "p.npz") as z:
        assert sorted(z.files) == ["agent_heading", "agent_x", "agent_y", "trail"]
        assert z["trail"].dtype == np.float32 and z["trail"].shape == (32, 48)
        for name in ("agent_y", "agent_x", "agent_heading"):
            assert z[name].dtype == np.float32 and z[name].shape == (500,), name
        assert (z["agent_x"] < 48).all() and (z["agent_y"] < 32).all()
        assert ((z["agent_heading"] >= 0) & (z["agent_heading"] < 2 * np.pi)).all()
