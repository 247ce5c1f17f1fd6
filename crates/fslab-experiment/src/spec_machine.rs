//! `[machine]` and the sysctls of targets and variants: what a cell sets
//! on the machine, and which names are sysctl names at all.

use std::collections::BTreeMap;

pub use fslab_lab::machine::sysctl_name_error;
use fslab_lab::parse_bytes;
use serde::Deserialize;
use toml::Spanned;

use super::{Ctx, SpecError};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MachineSpec {
    #[serde(default)]
    sysctl: BTreeMap<String, Spanned<toml::Value>>,
    drop_caches: Option<Spanned<toml::Value>>,
    memory_limit: Option<Spanned<String>>,
    #[serde(default)]
    memory_limit_scales: bool,
}

/// Machine settings for every cell (cells may add sysctls).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Machine {
    pub sysctl: BTreeMap<String, String>,
    pub drop_caches: bool,
    /// Drop the caches once, before each run, and not between its phases
    /// (`drop_caches = "once"`).
    pub drop_caches_once: bool,
    pub memory_limit: Option<u64>,
    /// `--scale` scales the memory limit too (at least 256 MiB), keeping
    /// the workload's memory footprint against its limit.
    pub memory_limit_scales: bool,
}

fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub(super) fn sysctls(
    ctx: &Ctx,
    field: &str,
    m: &BTreeMap<String, Spanned<toml::Value>>,
) -> Result<BTreeMap<String, String>, SpecError> {
    let mut out = BTreeMap::new();
    for (k, v) in m {
        if let Some(e) = sysctl_name_error(k) {
            return ctx.err(v.span(), &format!("{field}.\"{k}\""), e);
        }
        if !matches!(
            v.get_ref(),
            toml::Value::String(_) | toml::Value::Integer(_)
        ) {
            return ctx.err(
                v.span(),
                &format!("{field}.\"{k}\""),
                "a sysctl value must be a number or a string",
            );
        }
        out.insert(k.clone(), value_text(v.get_ref()));
    }
    Ok(out)
}

/// `[machine]`.
pub(super) fn machine(ctx: &Ctx, m: &MachineSpec) -> Result<Machine, SpecError> {
    let memory_limit = match &m.memory_limit {
        None => None,
        Some(l) => match parse_bytes(l.get_ref()) {
            Some(b) if b >= 16 << 20 => Some(b),
            _ => {
                return ctx.err(
                    l.span(),
                    "machine.memory_limit",
                    format!("{:?} is not a size of at least 16M", l.get_ref()),
                )
            }
        },
    };
    let (drop_caches, drop_caches_once) = match &m.drop_caches {
        None => (false, false),
        Some(v) => match v.get_ref() {
            toml::Value::Boolean(b) => (*b, false),
            toml::Value::String(s) if s == "once" => (false, true),
            other => {
                return ctx.err(
                    v.span(),
                    "machine.drop_caches",
                    format!("{other} is not true, false or \"once\""),
                )
            }
        },
    };
    Ok(Machine {
        sysctl: sysctls(ctx, "machine.sysctl", &m.sysctl)?,
        drop_caches,
        drop_caches_once,
        memory_limit,
        memory_limit_scales: m.memory_limit_scales,
    })
}
