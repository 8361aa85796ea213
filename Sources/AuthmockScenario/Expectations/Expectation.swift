import AuthmockFileFormat
import Foundation

/// One thing a correct client shows, as a scenario states it under `expect:`,
/// `should:` or a `check:` step. Each kind lives in its own file: its YAML
/// key, its shape (the loader checks with it and the JSON Schema is generated
/// from it), the rule it stands for, and how it is judged from what the
/// server saw and what the application got.
protocol Expectation: Sendable {
    /// The key in a scenario file.
    static var key: String { get }
    /// The shape its value must have.
    static var shape: Shape { get }
    /// One line for the schema and the docs.
    static var doc: String { get }
    /// The rule it checks, named in every finding it makes.
    static var rule: String { get }
    /// Built from a value the checker has already matched against `shape`.
    init(_ value: SpecValue, checker: SpecChecker) throws(ScenarioError)
    /// Whether the client followed it; `passed` false when it did not.
    func judge(_ observation: Observation) -> Judgement
}

/// What an expectation concluded: a sentence of expected against observed,
/// and the journal lines or outcomes that show it.
struct Judgement {
    var passed: Bool
    var message: String
    var evidence: [String] = []
    /// What was counted, as data (`Finding.measured`).
    var measured: [Measured] = []
    /// The journal entries it points at (`Finding.entries`).
    var entries: [Int] = []

    /// A failure for want of evidence: what the expectation is about never
    /// happened, so the client broke nothing it speaks of (a cause reads this).
    static func nothingToJudge(_ message: String, evidence: [String] = []) -> Judgement {
        Judgement(passed: false, message: message, evidence: evidence, measured: [Measured.nothingToJudge])
    }
}

/// Every kind of expectation, in the order findings are reported (the
/// judgement of necessity first: it says most about a refresh bug).
public enum ExpectationKinds {
    static let all: [any Expectation.Type] = [
        SuperfluousRefreshesExpectation.self,
        RefreshesExpectation.self,
        LoginsExpectation.self,
        OutcomesExpectation.self,
        AnsweredWithExpectation.self,
        UnfoundedReauthExpectation.self,
        AttemptsPerCallExpectation.self,
        RefreshTokenReuseExpectation.self,
        StaleTokenUsesExpectation.self,
        ForeignRequestsWithTokenExpectation.self,
        MaxRequestsExpectation.self,
        SameBodyOnRetryExpectation.self,
        EveryAttemptExpectation.self,
        RetryAfterExpectation.self,
        RetriedWithNewTokenExpectation.self,
        RequestsAfterLogoutExpectation.self,
        OldLoginTokensExpectation.self,
        SignedOutAtServerExpectation.self,
        BodiesIntactExpectation.self,
        MutationsPerCallExpectation.self,
        ExpiredTokenUsesExpectation.self,
    ]

    static func named(_ key: String) -> (any Expectation.Type)? { all.first { $0.key == key } }

    /// The `expect` object of the format.
    static var spec: ObjectSpec { ObjectSpec("expect", all.map { Field($0.key, $0.shape, $0.doc) }) }

    /// The table of docs/scenarios.md#expectations (`authmock schema --expectations`).
    public static func markdownTable() -> String {
        "| key | what it checks |\n| --- | --- |\n" + all.map { "| `\($0.key)` | \($0.doc.replacingOccurrences(of: "|", with: "\\|")) |\n" }.joined()
    }
}

/// The expectations of one block, in report order.
public struct Expectations: Sendable {
    var items: [any Expectation]

    init(_ items: [any Expectation] = []) { self.items = items }

    public var isEmpty: Bool { items.isEmpty }
    public var keys: [String] { items.map { type(of: $0).key } }

    /// Judges every expectation; findings carry the block's level.
    func evaluate(_ observation: Observation, level: Scenario.Level) -> [Finding] {
        items.map { item in
            let verdict = item.judge(observation)
            let kind = type(of: item)
            return Finding(
                expectation: kind.key, passed: verdict.passed, message: verdict.message,
                evidence: verdict.passed ? [] : verdict.evidence, rule: kind.rule, level: level.rawValue,
                measured: verdict.measured.isEmpty ? nil : verdict.measured,
                entries: verdict.passed || verdict.entries.isEmpty ? nil : verdict.entries)
        }
    }

    /// Built from a checked `expect`-shaped object, in registry order.
    static func build(_ value: SpecValue, checker: SpecChecker) throws(ScenarioError) -> Expectations {
        let object = value.object ?? [:]
        var items: [any Expectation] = []
        for kind in ExpectationKinds.all {
            guard let field = object[kind.key] else { continue }
            items.append(try kind.init(field, checker: checker))
        }
        guard !items.isEmpty else { throw checker.error(at: value.mark, "state at least one expectation") }
        return Expectations(items)
    }
}

/// A count a scenario expects: exact (`1`) or `{min, max}`.
public struct CountRange: Sendable, Equatable {
    public var min: Int?
    public var max: Int?

    static let shape = Shape.oneOf([.integer(minimum: 0), objectShape])
    /// `{min, max}` alone.
    static let objectShape = Shape.object(
        ObjectSpec(
            "range",
            [
                Field("min", .integer(minimum: 0), "at least this many"),
                Field("max", .integer(minimum: 0), "at most this many"),
            ]))

    init(min: Int?, max: Int?) {
        self.min = min
        self.max = max
    }

    init(_ value: SpecValue, checker: SpecChecker) throws(ScenarioError) {
        if let exact = value.integer {
            self.init(min: exact, max: exact)
            return
        }
        let o = value.object ?? [:]
        self.init(min: o["min"]?.integer, max: o["max"]?.integer)
        if let min, let max, min > max { throw checker.error(at: value.mark, "min \(min) is greater than max \(max)") }
        if min == nil && max == nil { throw checker.error(at: value.mark, "give min, max or both") }
    }

    /// `text` with a noun that agrees: "exactly 1 sign-in request", "at most 3 sign-in requests".
    func of(_ noun: String) -> String { "\(text) \(text.hasSuffix(" 1") ? noun : noun + "s")" }

    func admits(_ value: Int) -> Bool { (min.map { value >= $0 } ?? true) && (max.map { value <= $0 } ?? true) }

    var text: String {
        switch (min, max) {
        case let (a?, b?) where a == b: "exactly \(a)"
        case let (a?, b?): "between \(a) and \(b)"
        case let (a?, nil): "at least \(a)"
        case let (nil, b?): "at most \(b)"
        default: "any number of"
        }
    }
}

/// An expectation that is a count of journal entries: the shared body of
/// `refreshes`, `logins`, `refresh_token_reuse` and the like.
protocol CountingExpectation: Expectation {
    var range: CountRange { get }
    init(range: CountRange)
}

extension CountingExpectation {
    init(_ value: SpecValue, checker: SpecChecker) throws(ScenarioError) {
        self.init(range: try CountRange(value, checker: checker))
    }
}

/// An expectation that is a flag (`same_body_on_retry: true`): false
/// means "not checked", so it passes without looking.
protocol FlagExpectation: Expectation {
    var required: Bool { get }
    init(required: Bool)
    func judgeRequired(_ observation: Observation) -> Judgement
}

extension FlagExpectation {
    static var shape: Shape { .boolean }
    init(_ value: SpecValue, checker: SpecChecker) throws(ScenarioError) { self.init(required: value.boolean ?? true) }
    func judge(_ observation: Observation) -> Judgement {
        required ? judgeRequired(observation) : Judgement(passed: true, message: "not required")
    }
}

/// Rules findings cite. A case's own public reports are in its `reports:`.
enum Rules {
    static let singleFlight = "one refresh per expiry: concurrent and late 401s share it (RFC 9700 section 4.14.2; the case's reports)"
    static let rotation = "RFC 9700 section 4.14.2: a rotated refresh token is never presented again"
    static let bearer = "RFC 6750 section 2.1: Authorization: Bearer on every protected request"
    static let retryAfter = "RFC 9110 section 10.2.3: Retry-After"
    static let bounded = "a client stops by itself: a 401 that refreshing cannot cure ends the call"
    static let replay = "a retry repeats the application's request: same method, headers and body"
    static let thirdParty = "RFC 6750 section 5.3: bearer tokens go only to the resource server they are for"
    static let protocolV1 = "docs/driver-protocol.md: what the driver reports is what the application saw"
    static let caseReports = "the case's public reports"
}
