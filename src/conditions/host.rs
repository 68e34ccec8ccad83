//! Facts about the machine fairbench runs on, read from /proc and /sys (Linux).

use crate::model::HostFacts;

fn read_file(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// This host's facts.
pub fn read() -> HostFacts {
    let cpuinfo = read_file("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let memory_bytes = read_file("/proc/meminfo")
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0);
    let os = read_file("/etc/os-release")
        .and_then(|r| {
            r.lines()
                .find(|l| l.starts_with("PRETTY_NAME="))
                .map(|l| l.trim_start_matches("PRETTY_NAME=").trim_matches('"').to_string())
        })
        .unwrap_or_else(|| std::env::consts::OS.to_string());
    HostFacts {
        hostname: hostname(),
        cpu_model,
        cores: crate::cpu_count(),
        memory_bytes,
        os,
        kernel: read_file("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
        clocksource: read_file("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        cpu_governor: read_file("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        transparent_hugepages: read_file("/sys/kernel/mm/transparent_hugepage/enabled"),
    }
}

/// This host's name.
pub fn hostname() -> String {
    read_file("/proc/sys/kernel/hostname").unwrap_or_else(|| "localhost".into())
}

/// RAM available to new work on this host now (`MemAvailable`: free memory plus the page
/// cache and buffers the kernel can reclaim), when readable.
pub fn available_memory_bytes() -> Option<u64> {
    let meminfo = read_file("/proc/meminfo")?;
    let kb = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?.split_whitespace().nth(1)?;
    kb.parse::<u64>().ok().map(|kb| kb * 1024)
}
