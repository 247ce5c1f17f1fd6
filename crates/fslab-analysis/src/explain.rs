//! What the instruments say about an analysis beyond its numbers: a
//! confounder (the two sides' machines differ), a phase's limiter, a
//! profile's difference, an operation's share of the time. An explainer
//! ([`crate::analysis::Explainer`]) reads the analysis and the store and
//! returns [`Explanation`]s; they are kept in [`crate::Analysis::explanations`],
//! and every exporter shows them beside the numbers they are about.

use serde::Serialize;

/// One thing an instrument says, about one part of an analysis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    /// What it explains.
    #[serde(flatten)]
    pub about: About,
    pub kind: ExplanationKind,
    /// One line, as printed (`create: limited by the journal: ...`).
    pub says: String,
    /// What it rests on, a line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
}

/// The part of an analysis an explanation is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "about", rename_all = "snake_case")]
pub enum About {
    /// The selection as a whole.
    Selection,
    /// A group (by its label).
    Group { group: String },
    /// One phase of a group's runs.
    Phase { group: String, phase: String },
    /// One comparison: a metric of a group against the baseline.
    Comparison { metric: String, group: String },
}

impl About {
    /// How the exporters name it.
    pub fn words(&self) -> String {
        match self {
            About::Selection => "all".into(),
            About::Group { group } => group.clone(),
            About::Phase { group, phase } => format!("{group}, {phase}"),
            About::Comparison { metric, group } => format!("{group}, {metric}"),
        }
    }
}

impl Explanation {
    /// Said before any verdict: what differs between the machines (or that
    /// nothing does), about the selection or a group.
    pub fn before_verdicts(&self) -> bool {
        matches!(
            self.kind,
            ExplanationKind::Confounder | ExplanationKind::Confounded | ExplanationKind::Note
        ) && matches!(self.about, About::Selection | About::Group { .. })
    }
}

/// What kind of thing an explanation says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExplanationKind {
    /// The two sides differ in something other than what is compared.
    Confounder,
    /// A confounder at least as large as the difference it is about (the
    /// CPU clock moved as much): a faster/slower verdict gives way to it.
    Confounded,
    /// What held a phase back.
    Limiter,
    /// Where the profile changed.
    Profile,
    /// An operation's share of the time.
    Share,
    /// Anything else worth saying.
    Note,
}

impl ExplanationKind {
    pub fn name(self) -> &'static str {
        match self {
            ExplanationKind::Confounder => "confounder",
            ExplanationKind::Confounded => "confounded",
            ExplanationKind::Limiter => "limiter",
            ExplanationKind::Profile => "profile",
            ExplanationKind::Share => "share",
            ExplanationKind::Note => "note",
        }
    }
}
