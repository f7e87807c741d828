//! Bad configs are refused with exit status 2 and a message that names the
//! config file, the key or TOML line at fault and what is allowed.
//!
//! Each case is a small config in `tests/bad/`; its first lines
//! (`# expect: FRAGMENT`, one per fragment) list what the message must contain.
//! Every case is driven through `gravel check`, several through `gravel run` too.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_gravel");

fn bad_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("bad")
}

/// Run `gravel` with `args` in `cwd`.
fn gravel<I, S>(args: I, cwd: &Path) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("cannot start the gravel binary")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The `# expect:` fragments at the top of a case file.
fn expectations(path: &Path) -> Vec<String> {
    let body = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let fragments: Vec<String> = body
        .lines()
        .take_while(|l| l.starts_with('#'))
        .filter_map(|l| l.strip_prefix("# expect:"))
        .map(|f| f.trim().to_string())
        .filter(|f| !f.is_empty())
        .collect();
    assert!(
        !fragments.is_empty(),
        "{} has no `# expect:` line",
        path.display()
    );
    fragments
}

/// Assert that `gravel <sub> tests/bad/<case>` exits 2 with a message naming
/// the file and every expected fragment, and (for `run`) writes no output.
fn assert_rejected(case: &str, sub: &str) {
    let path = bad_dir().join(case);
    assert!(path.is_file(), "missing case file {}", path.display());
    let expect = expectations(&path);
    let out_dir = tempfile::tempdir().unwrap();
    let mut args: Vec<&OsStr> = vec![OsStr::new(sub), path.as_os_str()];
    if sub == "run" {
        args.extend([OsStr::new("--out"), out_dir.path().as_os_str()]);
    }
    let out = gravel(&args, out_dir.path());
    let stderr = text(&out.stderr);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(2),
        "gravel {sub} {case}: expected exit status 2\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stderr.contains(case),
        "gravel {sub} {case}: the message does not name the config file\nstderr:\n{stderr}"
    );
    for fragment in &expect {
        assert!(
            stderr.contains(fragment.as_str()),
            "gravel {sub} {case}: the message lacks `{fragment}`\nstderr:\n{stderr}"
        );
    }
    assert!(
        !stdout.contains("stable time step") && !stdout.contains("done:"),
        "gravel {sub} {case}: printed a report for a bad config\nstdout:\n{stdout}"
    );
    if sub == "run" {
        let left: Vec<_> = std::fs::read_dir(out_dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(
            left.is_empty(),
            "gravel run {case}: a refused config wrote {left:?}"
        );
    }
}

macro_rules! bad_cases {
    ($($name:ident => $file:literal $(+ $also:ident)?;)*) => {
        /// Every case file, for the coverage check.
        const CASES: &[&str] = &[$($file),*];
        $(
            #[test]
            fn $name() {
                assert_rejected($file, "check");
                $(assert_rejected($file, stringify!($also));)?
            }
        )*
    };
}

bad_cases! {
    unknown_key_names_the_line => "unknown_key.toml" + run;
    wrong_value_type_names_the_line => "wrong_type.toml";
    unknown_material_in_particles => "unknown_material_particles.toml" + run;
    unknown_material_in_wall => "unknown_material_wall.toml" + run;
    negative_radius_random_block => "negative_radius.toml";
    negative_radius_in_list => "negative_radius_list.toml";
    overlapping_list_particles_name_both_ids => "overlapping_list.toml" + run;
    overlapping_list_particles_through_a_periodic_face => "overlapping_list_periodic.toml" + run;
    particle_outside_domain => "outside_domain.toml" + run;
    dt_above_stable_limit => "dt_too_large.toml" + run;
    dt_above_stable_limit_overdamped_hooke => "dt_too_large_overdamped_hooke.toml";
    csv_wrong_column_count_names_the_line => "csv_column_count.toml" + run;
    csv_not_a_number_names_line_and_column => "csv_not_a_number.toml";
    steps_and_time_both_given => "steps_and_time.toml";
    restitution_above_one => "restitution_out_of_range.toml";
    restitution_zero_in_pair_override => "restitution_pair_zero.toml";
    unknown_normal_model => "unknown_model.toml" + run;
    unknown_tangential_model => "unknown_tangential_model.toml";
    spring_slider_without_stiffness_ratio_or_mindlin => "spring_slider_without_stiffness.toml";
    hertz_without_youngs_modulus => "hertz_without_youngs_modulus.toml";
    mindlin_without_youngs_modulus => "mindlin_without_youngs_modulus.toml";
    periodic_box_too_small_for_interaction_range => "periodic_too_small.toml" + run;
    unknown_output_field => "unknown_output_field.toml";
    wall_with_zero_normal => "wall_zero_normal.toml";
    unknown_material_in_pair_override => "pair_unknown_material.toml";
    region_outside_domain => "region_outside_domain.toml";
    random_block_cannot_place_count => "random_too_many.toml";
    rolling_needs_a_normal_stiffness => "rolling_with_wca.toml" + run;
    rolling_negative_friction => "rolling_negative_friction.toml";
    rolling_damping_above_one => "rolling_damping_out_of_range.toml";
    rolling_mobilised_damping_factor_above_one => "rolling_mobilised_factor_out_of_range.toml";
    rolling_unknown_setting_names_the_line => "rolling_unknown_setting.toml";
    rolling_type_c_needs_stiffness_factor => "rolling_type_c_without_stiffness_factor.toml";
    rolling_type_c_negative_rolling_radius => "rolling_type_c_negative_radius.toml";
    unknown_rolling_model => "unknown_rolling_model.toml";
    spinning_negative_friction_in_pair_override => "spinning_pair_negative_friction.toml";
    spinning_needs_an_overlap_normal_model => "spinning_with_wca.toml";
    checkpoint_every_not_a_step_count => "checkpoint_every.toml";
    dt_neither_number_nor_auto => "dt_word.toml";
    csv_duplicate_ids => "csv_duplicate_ids.toml";
    unknown_stochastic_model => "stochastic_unknown_model.toml" + run;
    stochastic_negative_kt => "stochastic_negative_kt.toml";
    stochastic_linear_without_gamma => "stochastic_linear_without_gamma.toml";
    stochastic_together_with_tangential => "stochastic_with_tangential.toml" + run;
    stochastic_with_tangential_in_pair_override => "stochastic_pair_with_tangential.toml";
    stochastic_between_particle_and_wall => "stochastic_with_wall.toml";
}

/// Every file in `tests/bad/` has a test above (and every test a file).
#[test]
fn every_case_file_is_tested() {
    let mut files: Vec<String> = std::fs::read_dir(bad_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    files.sort();
    let mut cases: Vec<String> = CASES.iter().map(|s| s.to_string()).collect();
    cases.sort();
    assert_eq!(files, cases);
}

/// A case with its one fault repaired passes: the cases fail for the reason they state.
#[test]
fn repaired_case_passes_check() {
    let body = std::fs::read_to_string(bad_dir().join("restitution_out_of_range.toml")).unwrap();
    let fixed = body.replace("restitution = 1.5", "restitution = 0.5");
    assert_ne!(body, fixed);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("repaired.toml");
    std::fs::write(&path, fixed).unwrap();
    let out = gravel([OsStr::new("check"), path.as_os_str()], dir.path());
    assert_eq!(out.status.code(), Some(0), "stderr:\n{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("particles at step 0: 1"));
}

/// The config of `dt_too_large.toml` with `allow_large_dt = true`.
fn large_dt_allowed(dir: &Path) -> PathBuf {
    let body = std::fs::read_to_string(bad_dir().join("dt_too_large.toml")).unwrap();
    let allowed = body.replacen("[run]\n", "[run]\nallow_large_dt = true\n", 1);
    assert_ne!(body, allowed);
    let path = dir.join("large_dt_allowed.toml");
    std::fs::write(&path, allowed).unwrap();
    path
}

#[test]
fn allow_large_dt_makes_check_and_run_pass() {
    let dir = tempfile::tempdir().unwrap();
    let path = large_dt_allowed(dir.path());
    let out = gravel([OsStr::new("check"), path.as_os_str()], dir.path());
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{}",
        text(&out.stderr)
    );
    assert!(stdout.contains("stable time step"), "{stdout}");
    assert!(stdout.contains("chosen time step: 1e-3"), "{stdout}");
    let out_dir = dir.path().join("out");
    let out = gravel(
        [
            OsStr::new("run"),
            path.as_os_str(),
            OsStr::new("--steps"),
            OsStr::new("3"),
            OsStr::new("--out"),
            out_dir.as_os_str(),
            OsStr::new("--quiet"),
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "stderr:\n{}", text(&out.stderr));
    assert!(out_dir.join("bad.h5").is_file());
}

/// README: `allow_large_dt = true` runs with a dt above the stable limit and
/// "warns in check" (the schema: "a warning is printed").
#[test]
fn allow_large_dt_warns_in_check() {
    let dir = tempfile::tempdir().unwrap();
    let path = large_dt_allowed(dir.path());
    let out = gravel([OsStr::new("check"), path.as_os_str()], dir.path());
    assert_eq!(out.status.code(), Some(0));
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr)).to_lowercase();
    assert!(
        all.contains("warning"),
        "gravel check printed no warning for a dt above the stable limit:\n{all}"
    );
}

#[test]
fn nonexistent_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no_such_config.toml");
    for sub in ["check", "run"] {
        let out = gravel([OsStr::new(sub), path.as_os_str()], dir.path());
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "gravel {sub}: {stderr}");
        assert!(stderr.contains("no_such_config.toml"), "{stderr}");
        assert!(stderr.contains("cannot read"), "{stderr}");
    }
}

/// A relative config path is named as given, and `kind = "file"` paths are
/// resolved relative to the config, not the working directory.
#[test]
fn csv_path_resolves_relative_to_the_config() {
    let out = gravel(
        ["check", "bad/csv_not_a_number.toml"],
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad/csv_not_a_number.toml"), "{stderr}");
    assert!(stderr.contains("line 4, column `vy`"), "{stderr}");
    assert!(!stderr.contains("cannot read"), "{stderr}");
}
