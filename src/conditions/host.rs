//! Facts about the machine fairbench runs on, read from /proc and /sys (Linux).

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HostFacts {
    pub hostname: String,
    pub cpu_model: String,
    pub cores: u32,
    pub memory_bytes: u64,
    pub os: String,
    pub kernel: String,
    /// `tsc`, `kvm-clock`, `hpet`...: timing quality under virtualization.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocksource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_governor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transparent_hugepages: Option<String>,
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

impl HostFacts {
    pub fn read() -> Self {
        let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        let memory_bytes = read("/proc/meminfo")
            .and_then(|m| {
                m.lines()
                    .find(|l| l.starts_with("MemTotal:"))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|kb| kb.parse::<u64>().ok())
            })
            .map(|kb| kb * 1024)
            .unwrap_or(0);
        let os = read("/etc/os-release")
            .and_then(|r| {
                r.lines()
                    .find(|l| l.starts_with("PRETTY_NAME="))
                    .map(|l| l.trim_start_matches("PRETTY_NAME=").trim_matches('"').to_string())
            })
            .unwrap_or_else(|| std::env::consts::OS.to_string());
        HostFacts {
            hostname: crate::hostname(),
            cpu_model,
            cores: crate::cpu_count(),
            memory_bytes,
            os,
            kernel: read("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
            clocksource: read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
            cpu_governor: read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            transparent_hugepages: read("/sys/kernel/mm/transparent_hugepage/enabled"),
        }
    }
}
