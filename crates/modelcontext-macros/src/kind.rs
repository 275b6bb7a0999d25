//! Which macro is at work (`#[tool]`, `#[resource]`, `#[prompt]`): the rules and words that
//! differ between them.

/// Which macro is reading the signature; each has its own rules and wording.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `#[tool]`, alone or inside `#[tools]`.
    Tool,
    /// `#[resource]`.
    Resource,
    /// `#[prompt]`.
    Prompt,
}

impl Kind {
    /// The word used in error messages.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Resource => "resource",
            Kind::Prompt => "prompt",
        }
    }

    /// The `#[arg(...)]` options this kind accepts.
    pub fn arg_keys(self) -> &'static [&'static str] {
        match self {
            Kind::Tool => &[
                "description",
                "default",
                "minimum",
                "maximum",
                "min_length",
                "max_length",
                "pattern",
                "rename",
            ],
            Kind::Resource => &["description", "rename", "complete"],
            Kind::Prompt => &["description", "default", "rename", "complete"],
        }
    }

    /// The name of the generated struct holding the arguments.
    pub fn struct_name(self) -> &'static str {
        match self {
            Kind::Resource => "Params",
            Kind::Tool | Kind::Prompt => "Args",
        }
    }
}
