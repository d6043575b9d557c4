use std::fs::OpenOptions;
use std::path::PathBuf;

use super::*;
use crate::hash::DefaultHashBuilder;
use crate::settings::TableSettings;
use crate::sync::mapping::byte_is_locked;

fn temp_path(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("ccf-shared-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// A writer registers by a lock on a description of the path it opens a second time: if another
/// file was renamed over the path in between, that lock would be on the other file, and the
/// mapped file's other writers would take this live writer for dead and recover its stripes.
#[test]
fn a_path_replaced_between_the_two_opens_is_refused_not_registered_on_the_other_file() {
    let (path, other) = (temp_path("replaced"), temp_path("replacement"));
    let geometry = TableSettings::default().geometry().unwrap();
    for at in [&path, &other] {
        let hasher = RecordedHasher::of(&DefaultHashBuilder::default());
        drop(create(at, &geometry, 1000, hasher).unwrap());
    }
    let opened = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let query = File::open(&path).unwrap();
    let mut bytes = vec![0; LIVE_HEADER_LEN];
    opened.read_exact_at(&mut bytes, 0).unwrap();
    let parsed = header::parse(&bytes, opened.metadata().unwrap().len()).unwrap();
    std::fs::rename(&other, &path).unwrap();

    let mapped = map(
        &path,
        opened,
        &parsed.geometry,
        &parsed.layout,
        Access::ReadWrite,
    );
    match mapped {
        Err(SharedError::Busy { what, .. }) => assert!(what.contains("replaced"), "{what}"),
        Err(err) => panic!("{err}"),
        // Registered: then in the first slot, locked on the file it mapped.
        Ok(_registered) => assert!(
            byte_is_locked(&query, parsed.layout.registration),
            "registered by a lock on another file than the one mapped"
        ),
    }
    std::fs::remove_file(&path).unwrap();
}
