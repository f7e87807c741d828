//! Bad configs are refused with exit status 2 and a message that names the
//! config file, the key or TOML line at fault and what is allowed.
//!
//! The cases live in `tests/bad/`, grouped by subsystem (`run.toml`,
//! `domain.toml`, `particles.toml`, `csv.toml`, `contact.toml`,
//! `rolling.toml`, `spinning.toml`, `stochastic.toml`, `walls.toml`,
//! `geometry.toml`, `diagnostics.toml`, `output.toml`, `parallel.toml`, `syntax.toml`, `materials.toml`,
//! `output_interval.toml`, `outlets.toml`), in the style of lumol's `tests/interactions/bad/*.toml`:
//!
//! ```text
//! +++ unknown_key
//! [run]
//! name = "bad"
//! stepz = 10
//! #^ {line}
//! #^ unknown field `stepz`
//! dt = 1e-5
//! ...
//! ```
//!
//! - a line `+++ NAME` starts a case, which runs to the next `+++` line or
//!   the end of the file (comments before the first case describe the file);
//! - each case is a whole config, written to a temporary folder as
//!   `NAME.toml` (with a copy of `tests/bad/data/`, the CSV files that
//!   `kind = "file"` cases read, relative to the config), so that the
//!   message can be checked to name the config file;
//! - a `#^ FRAGMENT` line says that the message must contain `FRAGMENT`; it
//!   sits under the faulty line. `#^ {line}` stands for `line N`, `N` being
//!   the number of the line above it in the written config (the `#^` lines
//!   are left out of it), so a case says "the message names this line"
//!   without counting lines by hand.
//!
//! Whole configs rather than a shared base plus per-case tables: a case
//! reads as the file a user would write, its fault is where it would be in
//! such a file, and TOML line numbers are those of a real file.
//!
//! Every case is driven through `gravel check`, several through `gravel run`
//! too (`+ run` below), which must also write nothing; every case in the
//! files has a test and every test a case (`every_case_is_tested`).

mod common;

use common::*;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

fn bad_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("bad")
}

/// One case of a group file.
#[derive(Debug, Clone)]
struct BadCase {
    /// The group file it is in (for messages).
    group: String,
    /// `NAME` of its `+++ NAME` line.
    name: String,
    /// The config written for it (without the `#^` lines).
    text: String,
    /// What the message must contain.
    fragments: Vec<String>,
}

/// The cases of one group file (see the module docs for the format).
fn parse_group(path: &Path) -> Vec<BadCase> {
    let group = path.file_name().unwrap().to_string_lossy().into_owned();
    let body = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut cases: Vec<(String, Vec<String>, Vec<String>)> = Vec::new();
    for (k, line) in body.lines().enumerate() {
        let at = || format!("{group}, line {}", k + 1);
        if let Some(name) = line.strip_prefix("+++") {
            let name = name.trim();
            assert!(
                !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{}: a case needs a name of lower-case letters, digits and `_`: `{line}`",
                at()
            );
            cases.push((name.to_string(), Vec::new(), Vec::new()));
            continue;
        }
        let Some((_, lines, fragments)) = cases.last_mut() else {
            assert!(
                line.trim().is_empty() || line.starts_with('#'),
                "{}: only comments may come before the first `+++` case",
                at()
            );
            continue;
        };
        match line.trim_start().strip_prefix("#^") {
            Some(fragment) => {
                let fragment = fragment.trim();
                assert!(!fragment.is_empty(), "{}: an empty `#^` line", at());
                assert!(
                    lines.iter().any(|l: &String| !l.trim().is_empty()),
                    "{}: a `#^` line needs a line above it",
                    at()
                );
                fragments.push(fragment.replace("{line}", &format!("line {}", lines.len())));
            }
            None => lines.push(line.to_string()),
        }
    }
    cases
        .into_iter()
        .map(|(name, mut lines, fragments)| {
            // Leading blank lines would shift the line numbers `{line}` computed.
            assert!(
                lines.first().is_none_or(|l| !l.trim().is_empty()),
                "{group}: case `{name}` starts with a blank line"
            );
            while lines.last().is_some_and(|l| l.trim().is_empty()) {
                lines.pop();
            }
            assert!(
                !fragments.is_empty(),
                "{group}: case `{name}` has no `#^` line"
            );
            BadCase {
                group: group.clone(),
                name,
                text: lines.join("\n") + "\n",
                fragments,
            }
        })
        .collect()
}

/// Every case of every group file, in file order.
fn all_cases() -> Vec<BadCase> {
    let mut groups: Vec<PathBuf> = std::fs::read_dir(bad_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    groups.sort();
    groups.iter().flat_map(|g| parse_group(g)).collect()
}

/// The case called `name`.
fn bad_case(name: &str) -> BadCase {
    let mut found: Vec<BadCase> = all_cases().into_iter().filter(|c| c.name == name).collect();
    assert_eq!(found.len(), 1, "{} cases called `{name}`", found.len());
    found.pop().unwrap()
}

/// Write `case` into `dir` as `NAME.toml`, with a copy of the CSV files it
/// may read (`data/`, resolved relative to the config); returns its path.
fn write_case(case: &BadCase, dir: &Path) -> PathBuf {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    for entry in std::fs::read_dir(bad_dir().join("data")).unwrap() {
        let from = entry.unwrap().path();
        std::fs::copy(&from, data.join(from.file_name().unwrap())).unwrap();
    }
    write_file(dir, &format!("{}.toml", case.name), &case.text)
}

/// Assert that `gravel <sub> NAME.toml` exits 2 with a message naming the
/// file and every expected fragment, and (for `run`) writes no output.
fn assert_rejected(name: &str, sub: &str) {
    let case = bad_case(name);
    let case_dir = tempfile::tempdir().unwrap();
    let path = write_case(&case, case_dir.path());
    let file = format!("{name}.toml");
    let what = format!("gravel {sub} {file} ({})", case.group);
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
        "{what}: expected exit status 2\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stderr.contains(&file),
        "{what}: the message does not name the config file\nstderr:\n{stderr}"
    );
    for fragment in &case.fragments {
        assert!(
            stderr.contains(fragment.as_str()),
            "{what}: the message lacks `{fragment}`\nstderr:\n{stderr}"
        );
    }
    assert!(
        !stdout.contains("stable time step") && !stdout.contains("done:"),
        "{what}: printed a report for a bad config\nstdout:\n{stdout}"
    );
    if sub == "run" {
        let left: Vec<_> = std::fs::read_dir(out_dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{what}: a refused config wrote {left:?}");
    }
}

macro_rules! bad_cases {
    ($($test:ident => $case:literal $(+ $also:ident)?;)*) => {
        /// Every case, for the coverage check.
        const CASES: &[&str] = &[$($case),*];
        $(
            #[test]
            fn $test() {
                assert_rejected($case, "check");
                $(assert_rejected($case, stringify!($also));)?
            }
        )*
    };
}

bad_cases! {
    // syntax.toml
    toml_value_missing_after_equals => "dt_missing_value" + run;
    toml_bare_word_is_told_to_quote => "dt_unquoted_word";
    dt_of_neither_accepted_form_lists_both => "dt_neither_number_nor_string";
    toml_missing_comma_in_array => "array_missing_comma" + run;
    toml_unclosed_array_names_its_opening_line => "unclosed_array";
    toml_unclosed_inline_table_names_its_opening_line => "unclosed_inline_table" + run;
    single_material_table_asks_for_an_array_of_tables => "material_single_table" + run;
    single_wall_table_asks_for_an_array_of_tables => "wall_single_table";
    single_particles_table_asks_for_an_array_of_tables => "particles_single_table";
    single_pair_table_asks_for_an_array_of_tables => "contact_pair_single_table";
    negative_count_names_the_key_and_its_line => "particles_negative_count" + run;
    radius_with_a_unit_lists_the_radius_forms => "particles_radius_with_unit";
    unknown_key_in_particles_names_its_line => "particles_unknown_key_at_its_line";
    wrong_type_in_wall_names_the_key_and_its_line => "wall_wrong_type_at_its_line";
    missing_key_in_particles_names_the_key => "particles_missing_key";
    nan_velocity_is_named_as_the_velocity => "particles_nan_velocity" + run;
    missing_table_is_named_as_a_table => "missing_table";
    unclosed_table_header_is_named => "unclosed_table_header";
    unknown_table_is_named_at_its_header => "unknown_table";
    // materials.toml
    density_required_by_a_particle_block => "density_missing_for_particles" + run;
    // output_interval.toml
    frame_interval_in_steps_and_in_time => "every_and_every_time" + run;
    frame_interval_below_one_step => "every_time_below_one_step";
    // run.toml
    unknown_key_names_the_line => "unknown_key" + run;
    wrong_value_type_names_the_line => "wrong_type";
    steps_and_time_both_given => "steps_and_time";
    dt_neither_number_nor_auto => "dt_word";
    dt_above_stable_limit => "dt_too_large" + run;
    dt_above_stable_limit_overdamped_hooke => "dt_too_large_overdamped_hooke";
    zero_steps => "steps_zero" + run;
    zero_time => "time_zero";
    steps_beyond_two_to_the_53 => "steps_too_many";
    time_over_dt_beyond_two_to_the_53 => "time_steps_overflow" + run;
    gravity_of_four_values => "gravity_four_values" + run;
    // parallel.toml
    threads_beyond_the_bound => "threads_too_many" + run;
    grid_of_four_values => "grid_four_values";
    grid_entry_of_zero => "grid_zero_entry";
    balance_every_of_zero => "balance_every_zero";
    balance_tolerance_below_one => "balance_tolerance_below_one";
    balance_tolerance_not_a_number => "balance_tolerance_not_finite";
    balance_with_a_misspelt_key => "balance_unknown_key";
    balance_as_a_word => "balance_a_word";
    grid_of_two_subdomains_on_one_rank => "grid_two_subdomains_on_one_rank" + run;
    // domain.toml
    periodic_box_too_small_for_interaction_range => "periodic_too_small" + run;
    domain_lo_of_four_values => "domain_lo_four_values" + run;
    domain_hi_of_two_values => "domain_hi_two_values";
    periodic_of_four_values => "periodic_four_values";
    // outlets.toml
    outlet_box_outside_the_domain => "outlet_outside_domain" + run;
    outlet_cylinder_outside_the_domain => "outlet_cylinder_outside_domain";
    unknown_lost_value_names_the_line => "lost_unknown" + run;
    outlet_with_a_stray_key => "outlet_stray_key";
    outlet_region_with_a_key_of_another_kind => "outlet_region_stray_key";
    outlet_name_given_twice => "outlet_name_twice";
    initial_particle_inside_an_outlet => "particle_in_outlet" + run;
    // particles.toml
    unknown_material_in_particles => "unknown_material_particles" + run;
    negative_radius_random_block => "negative_radius";
    negative_radius_in_list => "negative_radius_list";
    overlapping_list_particles_name_both_ids => "overlapping_list" + run;
    overlapping_list_particles_through_a_periodic_face => "overlapping_list_periodic" + run;
    particle_outside_domain => "outside_domain" + run;
    region_outside_domain => "region_outside_domain";
    random_block_cannot_place_count => "random_too_many";
    random_count_beyond_memory => "random_count_beyond_memory" + run;
    lattice_beyond_memory => "lattice_beyond_memory" + run;
    a_lattice_over_an_earlier_random_block_is_refused => "lattice_over_a_random_block" + run;
    a_lattice_touching_a_list_through_a_periodic_face_is_refused => "lattice_touching_a_list_through_a_periodic_face";
    pour_beyond_memory => "pour_beyond_memory";
    denormal_density_gives_zero_mass => "denormal_density_zero_mass" + run;
    list_position_of_four_values_names_the_entry => "list_position_four_values" + run;
    list_velocity_of_two_values => "list_velocity_two_values";
    list_omega_of_four_values => "list_omega_four_values";
    random_velocity_of_four_values => "random_velocity_four_values";
    region_lo_of_four_values => "region_lo_four_values";
    lattice_velocity_of_two_values => "lattice_velocity_two_values";
    pour_region_hi_of_four_values => "pour_region_hi_four_values";
    radius_min_above_max => "radius_min_above_max";
    radius_fractions_must_sum_to_one => "radius_fractions_not_summing_to_one";
    radius_sd_must_be_positive => "radius_sd_not_positive";
    radius_unknown_distribution_lists_the_allowed => "radius_unknown_distribution";
    radius_unknown_basis => "radius_unknown_basis";
    radius_lognormal_without_sd => "radius_normal_without_sd";
    radius_range_holding_none_of_the_distribution => "radius_range_missing_the_mass";
    fill_at_the_densest_packing => "fill_too_high" + run;
    fill_zero => "fill_zero";
    relaxed_fill_beyond_its_bound => "fill_too_many" + run;
    random_with_count_and_fill => "count_and_fill";
    random_with_neither_count_nor_fill => "neither_count_nor_fill";
    region_radius_zero => "region_radius_zero";
    region_axis_zero => "region_axis_zero";
    // csv.toml
    csv_wrong_column_count_names_the_line => "csv_column_count" + run;
    a_step_for_a_csv_file_is_refused => "csv_with_a_step";
    csv_not_a_number_names_line_and_column => "csv_not_a_number";
    csv_duplicate_ids => "csv_duplicate_ids";
    csv_duplicate_sparse_ids => "csv_duplicate_sparse_ids";
    csv_particle_overlapping_a_list => "csv_overlaps_a_list" + run;
    csv_particle_overlapping_a_lattice => "csv_overlaps_a_lattice";
    // contact.toml
    unknown_normal_model => "unknown_model" + run;
    unknown_tangential_model => "unknown_tangential_model";
    model_none_takes_no_setting => "none_with_a_setting";
    restitution_above_one => "restitution_out_of_range";
    restitution_zero_in_pair_override => "restitution_pair_zero";
    unknown_material_in_pair_override => "pair_unknown_material";
    hertz_without_youngs_modulus => "hertz_without_youngs_modulus";
    mindlin_without_youngs_modulus => "mindlin_without_youngs_modulus";
    spring_slider_has_no_default_stiffness_under_wca => "spring_slider_default_under_wca";
    hooke_collision_time_of_zero => "hooke_collision_time_zero";
    pair_override_of_three_materials => "pair_three_materials" + run;
    pair_override_of_one_material => "pair_one_material";
    // rolling.toml
    unknown_rolling_model => "unknown_rolling_model";
    rolling_needs_a_normal_stiffness => "rolling_with_wca" + run;
    rolling_negative_friction => "rolling_negative_friction";
    rolling_damping_above_one => "rolling_damping_out_of_range";
    rolling_mobilised_damping_factor_above_one => "rolling_mobilised_factor_out_of_range";
    rolling_unknown_setting_names_the_line => "rolling_unknown_setting";
    rolling_type_c_needs_stiffness_factor => "rolling_type_c_without_stiffness_factor";
    rolling_type_c_negative_rolling_radius => "rolling_type_c_negative_radius";
    rolling_cdt_takes_no_damping => "rolling_cdt_has_no_damping";
    // spinning.toml
    spinning_needs_an_overlap_normal_model => "spinning_with_wca";
    spinning_negative_friction_in_pair_override => "spinning_pair_negative_friction";
    // stochastic.toml
    unknown_stochastic_model => "stochastic_unknown_model" + run;
    stochastic_negative_kt => "stochastic_negative_kt";
    stochastic_linear_without_gamma => "stochastic_linear_without_gamma";
    stochastic_together_with_tangential => "stochastic_with_tangential" + run;
    stochastic_with_tangential_in_pair_override => "stochastic_pair_with_tangential";
    stochastic_between_particle_and_wall => "stochastic_with_wall";
    // walls.toml
    wall_with_zero_normal => "wall_zero_normal";
    unknown_material_in_wall => "unknown_material_wall" + run;
    wall_normal_of_two_values => "wall_normal_two_values";
    wall_point_of_four_values => "wall_point_four_values";
    cylinder_axis_of_four_values => "cylinder_axis_four_values";
    cylinder_axis_point_of_two_values => "cylinder_axis_point_two_values";
    mesh_file_that_is_missing => "mesh_missing_file" + run;
    mesh_file_that_is_not_stl => "mesh_not_stl";
    mesh_with_a_degenerate_triangle => "mesh_degenerate_triangle" + run;
    mesh_with_a_non_finite_corner => "mesh_nan_corner";
    mesh_with_a_flipped_triangle => "mesh_flipped_triangle";
    mesh_of_zero_scale => "mesh_zero_scale";
    sphere_behind_a_mesh_floor => "sphere_behind_a_mesh_floor" + run;
    // geometry.toml
    plane_across_a_periodic_axis => "plane_across_periodic_axis" + run;
    cylinder_across_a_periodic_axis => "cylinder_across_periodic_axis" + run;
    cylinder_near_a_periodic_face => "cylinder_near_periodic_face" + run;
    sphere_half_sunk_in_a_floor => "sphere_half_sunk_in_floor" + run;
    file_sphere_sunk_in_a_floor => "sphere_in_floor_from_file" + run;
    lattice_block_behind_a_floor => "lattice_behind_floor" + run;
    random_region_wholly_outside_a_drum => "random_region_outside_drum" + run;
    pour_region_wholly_behind_a_floor => "pour_region_behind_floor" + run;
    list_particle_behind_a_drum_names_particle_and_wall => "list_behind_drum" + run;
    // diagnostics.toml
    diagnostic_every_zero => "diagnostics_every_zero" + run;
    diagnostic_average_zero => "diagnostics_average_zero";
    diagnostic_region_outside_the_domain => "diagnostics_region_outside_domain";
    diagnostic_region_inverted => "diagnostics_region_inverted";
    profile_axis_not_x_y_z => "diagnostics_profile_axis";
    profile_without_bins => "diagnostics_profile_no_bins" + run;
    diagnostic_name_with_a_slash => "diagnostics_name_with_slash";
    diagnostic_name_given_twice => "diagnostics_name_twice" + run;
    diagnostic_kind_unknown_lists_the_kinds => "diagnostics_kind_unknown";
    diagnostic_without_every => "diagnostics_missing_every";
    coarse_grain_axes_out_of_order => "diagnostics_cg_axes_order";
    coarse_grain_bins_not_one_per_axis => "diagnostics_cg_bins_per_axis";
    coarse_grain_bins_not_a_count => "diagnostics_cg_bins_not_a_count";
    coarse_grain_too_many_cells => "diagnostics_cg_too_many_cells";
    coarse_grain_unknown_kernel => "diagnostics_cg_kernel";
    coarse_grain_width_zero => "diagnostics_cg_width_zero" + run;
    coarse_grain_without_width => "diagnostics_cg_missing_width";
    coarse_grain_width_beyond_a_period => "diagnostics_cg_width_beyond_period";
    wall_name_empty => "wall_name_empty" + run;
    // output.toml
    unknown_output_field => "unknown_output_field";
    checkpoint_every_not_a_step_count => "checkpoint_every";
    duplicate_output_field => "duplicate_output_field" + run;
    empty_output_dir => "empty_output_dir" + run;
}

/// Every case in `tests/bad/*.toml` has a test above, every test a case,
/// and no two cases share a name; `tests/bad/` holds only group files and
/// `data/`.
#[test]
fn every_case_is_tested() {
    let mut names: Vec<String> = all_cases().into_iter().map(|c| c.name).collect();
    names.sort();
    let before = names.len();
    names.dedup();
    assert_eq!(before, names.len(), "two cases share a name");
    let mut tested: Vec<String> = CASES.iter().map(|s| s.to_string()).collect();
    tested.sort();
    assert_eq!(names, tested);
    for entry in std::fs::read_dir(bad_dir()).unwrap() {
        let path = entry.unwrap().path();
        assert!(
            path.extension().is_some_and(|x| x == "toml") || path.ends_with("data"),
            "{} is neither a group file nor data/",
            path.display()
        );
    }
}

/// `count = 1e12` is refused by the memory estimate before any particle is
/// generated: at once, not after a hang while memory grows.
#[test]
fn absurd_count_is_refused_at_once() {
    let start = std::time::Instant::now();
    assert_rejected("random_count_beyond_memory", "check");
    let took = start.elapsed();
    assert!(
        took < std::time::Duration::from_secs(3),
        "refusing count = 1e12 took {took:?}"
    );
}

/// `#^ {line}` becomes the number of the line above it in the written
/// config, and the `#^` lines are left out of it.
#[test]
fn fragments_name_the_line_above_them() {
    let case = bad_case("unknown_key");
    let lines: Vec<&str> = case.text.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("stepz")).unwrap() + 1;
    assert!(case.fragments.contains(&format!("line {at}")), "{case:?}");
    assert!(!case.text.contains("#^"));
}

/// A case with its one fault repaired passes: the cases fail for the reason they state.
#[test]
fn repaired_case_passes_check() {
    let body = bad_case("restitution_out_of_range").text;
    let fixed = body.replace("restitution = 1.5", "restitution = 0.5");
    assert_ne!(body, fixed);
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "repaired.toml", &fixed);
    let out = gravel([OsStr::new("check"), path.as_os_str()], dir.path());
    assert_eq!(out.status.code(), Some(0), "stderr:\n{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("particles at step 0: 1"));
}

/// A material only walls use may leave out its density: the
/// `density_missing_for_particles` case with its particles made of the
/// other material passes `check`.
#[test]
fn density_is_optional_for_a_material_only_walls_use() {
    let body = bad_case("density_missing_for_particles").text;
    let fixed = body.replace(
        "kind = \"list\"\nmaterial = \"glass\"",
        "kind = \"list\"\nmaterial = \"steel\"",
    );
    assert_ne!(body, fixed);
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "walls_only.toml", &fixed);
    let out = gravel([OsStr::new("check"), path.as_os_str()], dir.path());
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{}", text(&out.stderr));
    assert!(stdout.contains("material `glass`: no density"), "{stdout}");
    assert!(
        stdout.contains("material `steel`: density 7800"),
        "{stdout}"
    );
}

/// The config of the `dt_too_large` case with `allow_large_dt = true`.
fn large_dt_allowed(dir: &Path) -> PathBuf {
    let body = bad_case("dt_too_large").text;
    let allowed = body.replacen("[run]\n", "[run]\nallow_large_dt = true\n", 1);
    assert_ne!(body, allowed);
    write_file(dir, "large_dt_allowed.toml", &allowed)
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
/// resolved relative to the config, not the working directory: the case is
/// written to `bad/` under the working directory, its CSV files to `bad/data/`.
#[test]
fn csv_path_resolves_relative_to_the_config() {
    let dir = tempfile::tempdir().unwrap();
    write_case(&bad_case("csv_not_a_number"), &dir.path().join("bad"));
    assert!(!dir.path().join("data").exists());
    let out = gravel(["check", "bad/csv_not_a_number.toml"], dir.path());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad/csv_not_a_number.toml"), "{stderr}");
    assert!(stderr.contains("line 4, column `vy`"), "{stderr}");
    assert!(!stderr.contains("cannot read"), "{stderr}");
}
