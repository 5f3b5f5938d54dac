"""The simulations from Python on the CPU backend: the command line's results bit for bit, the
fields as NumPy arrays, frames, outputs, checkpoints, and every refusal."""

import os

import numpy as np
import pytest

import rust_gpu_sim as rgs


def test_grayscott_fields_match_the_command_line_bit_for_bit(cli, tmp_path):
    sim = rgs.GrayScott(size=37, height=29, preset="mitosis", seed=7, backend="cpu")
    sim.step(30)
    cli("grayscott", "--width", 37, "--height", 29, "--preset", "mitosis", "--seed", 7, "--steps", 30,
        "--backend", "cpu", "--save", tmp_path / "gs.npz")
    saved = np.load(tmp_path / "gs.npz")
    assert sim.u.dtype == np.float32 and sim.u.shape == (29, 37)
    np.testing.assert_array_equal(sim.u, saved["u"])
    np.testing.assert_array_equal(sim.v, saved["v"])
    assert sim.steps_done == 30 and sim.device == "cpu" and sim.variant == "cpu"


def test_heat_field_matches_the_command_line_bit_for_bit(cli, tmp_path):
    sim = rgs.Heat(nx=13, ny=11, nz=9, init="sine", backend="cpu")
    sim.step(5)
    cli("heat", "--nx", 13, "--ny", 11, "--nz", 9, "--init", "sine", "--steps", 5, "--backend", "cpu",
        "--save", tmp_path / "heat.npz")
    saved = np.load(tmp_path / "heat.npz")
    assert sim.u.shape == (9, 11, 13)
    np.testing.assert_array_equal(sim.u, saved["u"])
    assert sim.dt > 0


def test_physarum_trail_matches_the_command_line_bit_for_bit(cli, tmp_path):
    sim = rgs.Physarum(size=48, agents=2000, preset="jones", seed=3, backend="cpu")
    sim.step(12)
    cli("physarum", "--size", 48, "--agents", 2000, "--preset", "jones", "--seed", 3, "--steps", 12,
        "--backend", "cpu", "--save", tmp_path / "p.npz")
    saved = np.load(tmp_path / "p.npz")
    np.testing.assert_array_equal(sim.trail, saved["trail"])
    agents = sim.agents
    assert agents["x"].shape == (2000,) and agents["heading"].dtype == np.float32


def test_barkley_matches_its_command_bit_for_bit(barkley_cli, tmp_path):
    sim = rgs.Barkley(40, 30, backend="cpu")
    sim.step(60)
    barkley_cli("--width", 40, "--height", 30, "--steps", 60, "--cpu", "--save", tmp_path / "b.npz",
                "--output", tmp_path / "b.png")
    saved = np.load(tmp_path / "b.npz")
    np.testing.assert_array_equal(sim.u, saved["u"])
    np.testing.assert_array_equal(sim.v, saved["v"])
    assert sim.variant == "cpu" and sim.frame().shape == (30, 40, 3)
    with pytest.raises(ValueError, match="width must be between 8"):
        rgs.Barkley(4, 30, backend="cpu")


def test_stepping_in_pieces_is_stepping_at_once():
    once = rgs.GrayScott(size=24, backend="cpu")
    once.step(20)
    pieces = rgs.GrayScott(size=24, backend="cpu")
    for _ in range(4):
        pieces.step(5)
    np.testing.assert_array_equal(once.u, pieces.u)
    np.testing.assert_array_equal(once.v, pieces.v)


def test_cpu_fields_are_copies_that_stay_as_they_were():
    sim = rgs.GrayScott(size=16, backend="cpu")
    before = sim.v
    kept = before.copy()
    sim.step(10)
    np.testing.assert_array_equal(before, kept)
    assert not np.array_equal(sim.v, kept)


def test_frames_are_rgb_through_the_palettes():
    sim = rgs.GrayScott(size=21, height=17, backend="cpu")
    sim.step(50)
    frame = sim.frame()
    assert frame.dtype == np.uint8 and frame.shape == (17, 21, 3)
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 1
    other = sim.frame(palette="viridis")
    assert other.shape == frame.shape and not np.array_equal(other, frame)
    with pytest.raises(ValueError, match="no-such-palette"):
        sim.frame(palette="no-such-palette")


def test_run_writes_the_outputs_the_command_line_writes(cli, tmp_path):
    sim = rgs.GrayScott(size=32, backend="cpu")
    written = sim.run(40, gif=tmp_path / "a.gif", save=tmp_path / "a.npz", frame_every=10)
    assert sorted(os.path.basename(p) for p in written) == ["a.gif", "a.npz"]
    assert (tmp_path / "a.gif").read_bytes()[:6] == b"GIF89a"
    cli("grayscott", "--size", 32, "--steps", 40, "--backend", "cpu", "--save", tmp_path / "b.npz")
    np.testing.assert_array_equal(np.load(tmp_path / "a.npz")["u"], np.load(tmp_path / "b.npz")["u"])
    assert sim.steps_done == 40
    sim.save_gif(tmp_path / "more.gif", 20, frame_every=5, fps=10)
    assert sim.steps_done == 60 and (tmp_path / "more.gif").stat().st_size > 0


def test_save_writes_npz_and_npy(tmp_path):
    sim = rgs.Heat(size=8, backend="cpu")
    sim.step(2)
    sim.save(tmp_path / "h.npz")
    np.testing.assert_array_equal(np.load(tmp_path / "h.npz")["u"], sim.u)
    gs = rgs.GrayScott(size=8, backend="cpu")
    written = gs.save(tmp_path / "f.npy")
    assert sorted(os.path.basename(p) for p in written) == ["f_u.npy", "f_v.npy"]
    np.testing.assert_array_equal(np.load(tmp_path / "f_v.npy"), gs.v)
    with pytest.raises(ValueError, match="npz"):
        gs.save(tmp_path / "f.txt")
    assert not (tmp_path / "f.txt").exists()


@pytest.mark.parametrize("make", [
    lambda: rgs.Barkley(24, 16, backend="cpu"),
    lambda: rgs.GrayScott(size=20, backend="cpu"),
    lambda: rgs.Heat(size=9, backend="cpu"),
    lambda: rgs.Physarum(size=24, agents=500, backend="cpu"),
])
def test_checkpoints_resume_bit_for_bit(make, tmp_path):
    first = make()
    first.step(7)
    first.save_checkpoint(tmp_path / "c.ckpt")
    second = make()
    second.resume(tmp_path / "c.ckpt")
    assert second.steps_done == 7
    first.step(5)
    second.step(5)
    name = "trail" if isinstance(first, rgs.Physarum) else "u"
    np.testing.assert_array_equal(getattr(first, name), getattr(second, name))


def test_a_checkpoint_of_other_rates_is_refused(tmp_path):
    sim = rgs.GrayScott(size=20, backend="cpu")
    sim.save_checkpoint(tmp_path / "c.ckpt")
    with pytest.raises(ValueError):
        rgs.GrayScott(size=20, preset="mitosis", backend="cpu").resume(tmp_path / "c.ckpt")
    with pytest.raises(FileNotFoundError, match="missing.ckpt"):
        sim.resume(tmp_path / "missing.ckpt")


def test_presets_are_listed():
    names = [p["name"] for p in rgs.GrayScott.presets()]
    assert "coral" in names and "mitosis" in names
    assert all({"feed", "kill", "steps"} <= p.keys() for p in rgs.GrayScott.presets())
    assert "network" in [p["name"] for p in rgs.Physarum.presets()]
    sim = rgs.GrayScott(size=8, preset="mitosis", backend="cpu")
    mitosis = next(p for p in rgs.GrayScott.presets() if p["name"] == "mitosis")
    assert sim.rates["feed"] == pytest.approx(mitosis["feed"]) and sim.preset_steps == mitosis["steps"]


@pytest.mark.parametrize("call, culprit, kind", [
    (lambda: rgs.GrayScott(size=-4, backend="cpu"), "size", ValueError),
    (lambda: rgs.GrayScott(size=0, backend="cpu"), "size", ValueError),
    (lambda: rgs.GrayScott(size=8, width=-1, backend="cpu"), "width", ValueError),
    (lambda: rgs.GrayScott(size=8, preset="no-such", backend="cpu"), "preset", ValueError),
    (lambda: rgs.GrayScott(size=8, variant="no-such", backend="cpu"), "variant", ValueError),
    (lambda: rgs.GrayScott(size=8, variant="fused", backend="cpu"), "variant", ValueError),
    (lambda: rgs.GrayScott(size=8, backend="tpu"), "backend", ValueError),
    (lambda: rgs.GrayScott(size=8, init="no-such", backend="cpu"), "init", ValueError),
    (lambda: rgs.GrayScott(size=8, seed=-1, backend="cpu"), "seed", ValueError),
    (lambda: rgs.GrayScott(size=8, dt=-1.0, backend="cpu"), "dt", ValueError),
    (lambda: rgs.Heat(nx=-3, backend="cpu"), "nx", ValueError),
    (lambda: rgs.Heat(size=8, alpha=0.0, backend="cpu"), "alpha", ValueError),
    (lambda: rgs.Physarum(size=16, agents=-5, backend="cpu"), "agents", ValueError),
    (lambda: rgs.Physarum(size=16, preset="no-such", backend="cpu"), "preset", ValueError),
    (lambda: rgs.GrayScott(size=8, backend="cpu").step(-1), "steps", ValueError),
    (lambda: rgs.GrayScott(size=8, backend="cpu").run(5, frame_every=0, gif="x.gif"), "frame-every", ValueError),
])
def test_bad_input_names_the_culprit(call, culprit, kind, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(kind, match=culprit):
        call()
    assert list(tmp_path.iterdir()) == []


def test_cuda_without_a_gpu_is_a_runtime_error():
    if rgs.cuda_available():
        pytest.skip("this machine has a GPU: the GPU tests cover it")
    with pytest.raises(RuntimeError, match="GPU"):
        rgs.GrayScott(size=8, backend="cuda")
    with pytest.warns(RuntimeWarning, match="CPU"):
        sim = rgs.GrayScott(size=8)  # auto: the CPU here, with the command line's notice
    assert sim.device == "cpu"
    sim.wait_stream(0)  # nothing to order on the CPU


def test_an_unwritable_output_writes_nothing(tmp_path):
    sim = rgs.GrayScott(size=8, backend="cpu")
    with pytest.raises(ValueError, match="--gif: cannot write"):
        sim.run(5, gif=tmp_path / "no-such-dir" / "a.gif", save=tmp_path / "a.npz")
    assert list(tmp_path.iterdir()) == []
    assert sim.steps_done == 0
