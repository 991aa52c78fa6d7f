//! Which embedded image a device loads for each choice (`ImageChoice`,
//! `SDPA_IMAGE`), and the typed refusals, without a GPU.

use sdpa::AttnError;
use sdpa::embedded::{ImageChoice, Load, choose, images};

const H100: (i32, i32) = (9, 0);
const L4: (i32, i32) = (8, 9);
const BLACKWELL: (i32, i32) = (10, 0);

fn arch(choice: &str, cc: (i32, i32)) -> Result<Load, AttnError> {
    choose(&ImageChoice::from_name(choice), "test GPU", cc)
}

/// The embedded image of `arch`.
fn image(arch: &str) -> &'static sdpa::embedded::Image {
    images().iter().find(|i| i.arch == arch).expect("an embedded image")
}

#[test]
fn auto_loads_the_devices_own_image() {
    for (cc, expected) in [(H100, "sm_90a"), (L4, "sm_89"), (BLACKWELL, "sm_89")] {
        let load = choose(&ImageChoice::Auto, "test GPU", cc).expect("an image");
        assert_eq!(load.image().arch, expected, "cc {cc:?}");
        assert_eq!(load.is_sm90a(), expected == "sm_90a");
    }
    // A cubin only where the capability is the image's own.
    assert!(matches!(arch("auto", BLACKWELL), Ok(Load::Ptx(_))));
    assert_eq!(matches!(arch("auto", H100), Ok(Load::Cubin(_))), image("sm_90a").cubin.is_some());
    match choose(&ImageChoice::Auto, "old GPU", (8, 6)) {
        Err(AttnError::UnsupportedDevice { name, major: 8, minor: 6 }) => assert_eq!(name, "old GPU"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_sm89_image_loads_its_ptx_on_hopper_and_its_cubin_on_its_own_arch() {
    // The sm_89 cubin is machine code for sm_89 only: on sm_90 the driver
    // compiles the sm_89 PTX.
    for cc in [H100, BLACKWELL] {
        match arch("sm_89", cc) {
            Ok(Load::Ptx(img)) => assert_eq!(img.arch, "sm_89"),
            other => panic!("cc {cc:?}: {other:?}"),
        }
    }
    let on_l4 = arch("sm_89", L4).expect("the sm_89 image on an L4");
    assert_eq!(on_l4.image().arch, "sm_89");
    assert!(!on_l4.is_sm90a());
    assert_eq!(matches!(on_l4, Load::Cubin(_)), image("sm_89").cubin.is_some());
    assert_eq!(on_l4.describe(), if image("sm_89").cubin.is_some() { "sm_89 cubin" } else { "sm_89 PTX (JIT)" });
}

#[test]
fn an_image_the_device_cannot_run_is_a_typed_error() {
    // Arch-specific: only on its own capability, older or newer.
    for cc in [L4, BLACKWELL, (9, 1)] {
        match arch("sm_90a", cc) {
            Err(e @ AttnError::ImageUnsupported { arch: "sm_90a", .. }) => {
                assert!(e.to_string().contains("only on compute capability 9.0"), "{e}")
            }
            other => panic!("cc {cc:?}: {other:?}"),
        }
    }
    // Newer than the device.
    match arch("sm_89", (8, 6)) {
        Err(e @ AttnError::ImageUnsupported { arch: "sm_89", major: 8, minor: 6, .. }) => {
            assert!(e.to_string().contains("8.9 or newer"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    // Not embedded.
    for name in ["sm_80", "sm89", "SM_89", "sm_90"] {
        match arch(name, H100) {
            Err(e @ AttnError::UnknownImage { .. }) => assert!(e.to_string().contains("sm_90a, sm_89"), "{e}"),
            other => panic!("{name}: {other:?}"),
        }
    }
    assert!(arch("sm_90a", H100).expect("sm_90a on Hopper").is_sm90a());
}

#[test]
fn choices_parse_from_names() {
    assert_eq!(ImageChoice::from_name("auto"), ImageChoice::Auto);
    assert_eq!(ImageChoice::from_name(""), ImageChoice::Auto);
    assert_eq!(ImageChoice::from_name(" sm_89 "), ImageChoice::arch("sm_89"));
    assert_eq!(ImageChoice::default(), ImageChoice::Auto);
    for choice in [ImageChoice::Auto, ImageChoice::arch("sm_89"), ImageChoice::arch("sm_90a")] {
        assert_eq!(ImageChoice::from_name(choice.name()), choice);
    }
}
