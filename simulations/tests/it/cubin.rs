//! The machine code embedded next to each PTX module, checked without a GPU: every cubin is
//! for the architecture it is filed under and holds every kernel entry point of its module,
//! and a GPU gets the right image for its compute capability.

use object::{Object, ObjectSymbol, SymbolKind};
use simulations::cuda::{IMAGES, KernelImage, modules, select_image};

/// `scripts/setup.sh` installs ptxas, so the build assembled the four architectures (the
/// sm_90 module of programmatic launches, its own alone).
#[test]
fn cubins_are_embedded_for_the_common_gpus() {
    for module in modules() {
        let archs: Vec<u32> = module.cubins.iter().map(|(arch, _)| *arch).collect();
        let expected: &[u32] = if module.requires == 90 { &[90] } else { &[90, 89, 86, 80] };
        assert_eq!(archs, expected, "{}: ptxas missing at build time? (see the build warning)", module.name);
    }
    assert_eq!(IMAGES.cubin_archs(), [90, 89, 86, 80]);
}

#[test]
fn every_cubin_holds_every_kernel_for_its_architecture() {
    for module in modules() {
        for (arch, image) in module.cubins {
            // A copy: the ELF reader wants the header aligned, and `include_bytes!` is not.
            let image = image.to_vec();
            let elf = object::File::parse(image.as_slice())
                .unwrap_or_else(|e| panic!("{} sm_{arch}: not an ELF image: {e}", module.name));
            // The low byte of e_flags is the SM version the code was assembled for.
            let flags = match elf.flags() {
                object::FileFlags::Elf { e_flags, .. } => e_flags,
                other => panic!("sm_{arch}: {other:?}"),
            };
            assert_eq!(flags & 0xff, *arch, "{} sm_{arch}: e_flags {flags:#x}", module.name);
            let functions: Vec<&str> = elf
                .symbols()
                .filter(|s| s.kind() == SymbolKind::Text)
                .filter_map(|s| s.name().ok())
                .collect();
            for kernel in module.kernels {
                assert!(
                    functions.contains(&kernel.name),
                    "{} sm_{arch} lacks {}: {functions:?}",
                    module.name,
                    kernel.name
                );
            }
        }
    }
}

#[test]
fn each_gpu_gets_the_newest_cubin_it_can_run_or_the_ptx() {
    let archs = [90, 89, 86, 80];
    let pick = |major, minor| select_image(&archs, major, minor, false);
    assert_eq!(pick(9, 0), KernelImage::Cubin(90)); // H100, H200
    assert_eq!(pick(8, 0), KernelImage::Cubin(80)); // A100
    assert_eq!(pick(8, 6), KernelImage::Cubin(86)); // RTX 30xx, A40
    assert_eq!(pick(8, 7), KernelImage::Cubin(86)); // Jetson Orin: sm_86 code runs on 8.7
    assert_eq!(pick(8, 9), KernelImage::Cubin(89)); // RTX 40xx, L4, L40
    assert_eq!(pick(7, 0), KernelImage::Ptx); // V100: older than every cubin
    assert_eq!(pick(7, 5), KernelImage::Ptx); // T4
    assert_eq!(pick(10, 0), KernelImage::Ptx); // B200: a new major version never runs older cubins
    assert_eq!(pick(12, 0), KernelImage::Ptx);
    assert_eq!(select_image(&archs, 9, 0, true), KernelImage::Ptx, "forced PTX");
    assert_eq!(select_image(&[], 9, 0, false), KernelImage::Ptx, "a build without ptxas");
}
