public import AuthmockDialect

/// Which case runs a selection makes: the cases by id and level, each on the
/// dialects asked for and on every declared dialect that applies to it.
/// `authmock run` and AuthmockTesting select through it.
public struct CaseSelection: Sendable {
    /// Case id globs (`1.*`, `2.1`); none: every case.
    public var ids: [String]
    /// `must` or `should`; nil: both.
    public var level: String?
    /// The dialects asked for (`--dialect`, a client's `profiles`); none: each case's own.
    public var profiles: [String]
    /// The declared dialects by name: `--dialect` files, and the built-in files
    /// that drivers know only by description (`builtinDialects(named:)`).
    public var dialects: [String: LoadedDialect]

    public init(ids: [String] = [], level: String? = nil, profiles: [String] = [], dialects: [String: LoadedDialect] = [:]) {
        self.ids = ids
        self.level = level
        self.profiles = profiles
        self.dialects = dialects
    }

    /// The cases whose id and level are selected.
    public func chosen(_ scenarios: [Scenario]) -> [Scenario] {
        scenarios.filter { scenario in
            (ids.isEmpty || ids.contains { scenario.hasID(matching: $0) }) && (level == nil || scenario.level.rawValue == level)
        }
    }

    /// Each chosen case on each dialect it runs on here.
    public func runs(_ scenarios: [Scenario]) -> [(Scenario, String)] {
        chosen(scenarios).flatMap { scenario in scenario.runs(onProfiles: profiles, dialects: dialects).map { (scenario, $0) } }
    }

    /// The dialects chosen cases name that are neither the built-in cases'
    /// own nor a declared dialect: a case of a team's dialect run without its file.
    public func undeclared(_ scenarios: [Scenario]) -> [(scenario: Scenario, profile: String)] {
        chosen(scenarios).flatMap { scenario in
            scenario.profiles.filter { !BuiltinSuite.caseDialects.contains($0) && dialects[$0] == nil }.map { (scenario, $0) }
        }
    }

    /// The built-in dialect files among `names` other than the built-in
    /// cases' own, which run as declared dialects (a vendor's).
    public static func builtinDialects(named names: some Sequence<String>) -> [String: LoadedDialect] {
        var dialects: [String: LoadedDialect] = [:]
        for name in Set(names) where !BuiltinSuite.caseDialects.contains(name) {
            if let builtin = DialectLoader.builtin(name) { dialects[name] = builtin }
        }
        return dialects
    }
}
