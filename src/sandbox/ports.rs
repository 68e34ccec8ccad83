//! Ports: the primary's, then one more per replica. A port is free when nothing listens on it
//! now and no other sandbox (even a stopped one) has it recorded.

use super::SandboxError;
use std::net::TcpListener;

/// Nothing on this host listens on `port` (any address, 127.0.0.1, or the nodes' `hosts`).
pub fn is_free(port: u16, hosts: &[String]) -> bool {
    let on = |host: &str| TcpListener::bind((host, port)).is_ok();
    on("0.0.0.0") && on("127.0.0.1") && hosts.iter().all(|h| on(h))
}

/// `count` consecutive ports: from `given` (each must be free), else the first free block
/// from `base`. `reserved` are the ports other sandboxes recorded.
pub fn choose(
    given: Option<u16>,
    base: u16,
    count: usize,
    reserved: &[u16],
    hosts: &[String],
) -> Result<Vec<u16>, SandboxError> {
    let usable = |p: u16| is_free(p, hosts) && !reserved.contains(&p);
    match given {
        Some(first) => {
            let ports = block(first, count).ok_or_else(|| {
                SandboxError::Invalid(format!("--port {first} leaves no room for {count} consecutive ports"))
            })?;
            for (i, &p) in ports.iter().enumerate() {
                if !usable(p) {
                    let node = if i == 0 { "primary".to_string() } else { format!("replica{i}") };
                    let by = if reserved.contains(&p) { "; recorded by another sandbox" } else { "" };
                    return Err(SandboxError::PortTaken { port: p, of: format!(" (for {node}{by})") });
                }
            }
            Ok(ports)
        }
        None => (base..base.saturating_add(2000))
            .filter_map(|first| block(first, count))
            .find(|ports| ports.iter().all(|&p| usable(p)))
            .ok_or_else(|| {
                SandboxError::Invalid(format!("no {count} consecutive free ports from {base}: choose them with --port"))
            }),
    }
}

/// Held while a sandbox chooses its ports and starts its nodes: two `sandbox up` at once on
/// one host (two studies, two sandbox homes) would otherwise both find the same ports free
/// before either listens on them. Released when dropped.
pub struct PortLock(#[allow(dead_code)] std::fs::File);

/// Waits for the host's port lock (a file in the temporary directory, shared by every
/// sandbox home and user).
pub fn lock() -> Result<PortLock, SandboxError> {
    use std::os::unix::io::AsRawFd;
    let path = std::env::temp_dir().join("fairbench-sandbox-ports.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .or_else(|_| std::fs::File::open(&path))
        .map_err(SandboxError::io("cannot open the port lock", &path))?;
    {
        use std::os::unix::fs::PermissionsExt;
        // Another user's sandboxes take the same lock.
        let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666));
    }
    // SAFETY: flock on a descriptor this function owns; the lock goes with the file.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(SandboxError::io("cannot lock", &path)(std::io::Error::last_os_error()));
    }
    Ok(PortLock(file))
}

/// The host's register of sandbox ports, for every sandbox home: `PORT DIR` lines. A
/// sandbox in another home (another user, another study's test) keeps a stopped or killed
/// node's port, and a client still pointed at it must not meet another sandbox's server
/// there. A line whose sandbox directory is gone is stale.
fn register_path() -> std::path::PathBuf {
    std::env::temp_dir().join("fairbench-sandbox-ports.list")
}

fn live_lines() -> Vec<(u16, String)> {
    let text = std::fs::read_to_string(register_path()).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(_, dir)| std::path::Path::new(dir).is_dir())
        .filter_map(|(port, dir)| Some((port.parse().ok()?, dir.to_string())))
        .collect()
}

/// Ports some sandbox on this host holds (call with the lock held).
pub fn registered() -> Vec<u16> {
    live_lines().into_iter().map(|(p, _)| p).collect()
}

/// Records `ports` as `dir`'s, dropping stale lines (call with the lock held).
pub fn register(ports: &[u16], dir: &std::path::Path) -> Result<(), SandboxError> {
    let mut lines = live_lines();
    lines.extend(ports.iter().map(|p| (*p, dir.display().to_string())));
    let text: String = lines.iter().map(|(p, d)| format!("{p} {d}\n")).collect();
    let path = register_path();
    std::fs::write(&path, text).map_err(SandboxError::io("cannot write", &path))?;
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666));
    Ok(())
}

fn block(first: u16, count: usize) -> Option<Vec<u16>> {
    let last = first as usize + count.checked_sub(1)?;
    (first > 0 && last <= u16::MAX as usize).then(|| (first..=last as u16).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_port_is_named_with_its_node() {
        let l = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let p = l.local_addr().unwrap().port();
        let e = choose(Some(p - 1), 13306, 2, &[], &[]);
        // p-1 may be taken by someone else too: either way the error names a port.
        let msg = e.unwrap_err().to_string();
        assert!(msg.contains("is taken: choose another with --port"), "{msg}");
    }

    #[test]
    fn reserved_ports_are_skipped() {
        let ports = choose(None, 40000, 2, &[40000, 40001, 40002], &[]).unwrap();
        assert!(ports[0] >= 40003, "{ports:?}");
        assert_eq!(ports[1], ports[0] + 1);
    }

    #[test]
    fn a_block_past_the_last_port_is_refused() {
        assert!(block(65535, 2).is_none());
        assert_eq!(block(10, 3), Some(vec![10, 11, 12]));
    }
}
