//! Authorisation: which identities may publish to which subjects and subscribe to which patterns (the NATS
//! nkeys / JWT permission model: permissions are subject patterns attached to a public key).

use crate::subject::{covers, matches, validate_pattern};
use crate::{AgentId, Result};
use std::collections::HashMap;

/// What one identity may do.
#[derive(Clone, Debug, Default)]
pub struct Rule {
    publish: Vec<String>,
    subscribe: Vec<String>,
}

/// The bus policy. An identity without a rule cannot connect (unless [`Policy::allow_all`] was chosen).
///
/// Always allowed to a connected agent: subscribing under its own `_INBOX.<id hex>.`, and publishing to any
/// `_INBOX.` subject (replies; inbox subjects end in 64 random bits and cannot be guessed).
#[derive(Clone, Debug, Default)]
pub struct Policy {
    rules: HashMap<AgentId, Rule>,
    everyone: Option<Rule>,
}

impl Policy {
    /// An empty policy: nobody may connect.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every authenticated identity may publish and subscribe to everything. An explicit choice, for tests
    /// and closed deployments.
    pub fn allow_all() -> Self {
        Policy {
            rules: HashMap::new(),
            everyone: Some(Rule { publish: vec![">".into()], subscribe: vec![">".into()] }),
        }
    }

    /// Grants `id` publishing on subjects matching any of `publish` and subscribing to patterns covered by
    /// any of `subscribe` (patterns may use `*` and `>`). Adds to any earlier grant for `id`.
    pub fn allow(mut self, id: AgentId, publish: &[&str], subscribe: &[&str]) -> Result<Self> {
        for p in publish.iter().chain(subscribe) {
            validate_pattern(p)?;
        }
        let r = self.rules.entry(id).or_default();
        r.publish.extend(publish.iter().map(|s| s.to_string()));
        r.subscribe.extend(subscribe.iter().map(|s| s.to_string()));
        Ok(self)
    }

    fn rule(&self, id: &AgentId) -> Option<&Rule> {
        self.rules.get(id).or(self.everyone.as_ref())
    }

    /// Whether `id` may connect at all.
    pub fn knows(&self, id: &AgentId) -> bool {
        self.rule(id).is_some()
    }

    /// Whether `id` may publish on `subject` (a valid subject).
    pub fn may_publish(&self, id: &AgentId, subject: &str) -> bool {
        let Some(r) = self.rule(id) else { return false };
        subject.starts_with("_INBOX.") || r.publish.iter().any(|p| matches(p, subject))
    }

    /// Whether `id` may subscribe to `pattern` (a valid pattern).
    pub fn may_subscribe(&self, id: &AgentId, pattern: &str) -> bool {
        let Some(r) = self.rule(id) else { return false };
        if let Some(rest) = pattern.strip_prefix("_INBOX.") {
            let hex = id.to_hex();
            return rest.len() > hex.len() + 1 && rest.starts_with(&hex) && rest.as_bytes()[hex.len()] == b'.';
        }
        r.subscribe.iter().any(|p| covers(p, pattern))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_and_refusals() {
        let a = AgentId([1; 16]);
        let b = AgentId([2; 16]);
        let p = Policy::new().allow(a, &["orders.*"], &["events.>"]).unwrap();
        assert!(p.knows(&a) && !p.knows(&b));
        assert!(p.may_publish(&a, "orders.new"));
        assert!(!p.may_publish(&a, "orders.new.eu"));
        assert!(!p.may_publish(&a, "events.x"));
        assert!(!p.may_publish(&b, "orders.new"));
        assert!(p.may_subscribe(&a, "events.x.y"));
        assert!(p.may_subscribe(&a, "events.*"));
        assert!(!p.may_subscribe(&a, ">"));
        assert!(!p.may_subscribe(&a, "orders.new"));
        let inbox = format!("_INBOX.{}.abc", a.to_hex());
        assert!(p.may_subscribe(&a, &inbox));
        assert!(!p.may_subscribe(&a, &format!("_INBOX.{}.abc", b.to_hex())));
        assert!(!p.may_subscribe(&a, "_INBOX.>"));
        assert!(p.may_publish(&a, "_INBOX.anything.x"));
        assert!(Policy::new().allow(a, &["a..b"], &[]).is_err());
        assert!(Policy::allow_all().may_subscribe(&b, "x.>"));
    }
}
