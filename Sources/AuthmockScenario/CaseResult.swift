import AuthmockModel
import Foundation

/// A case's verdict, in the vocabulary of conformance suites.
public enum Verdict: String, Sendable, Codable, CaseIterable {
    case pass = "PASS"
    /// A `must` expectation broke.
    case fail = "FAIL"
    /// Only `should` expectations broke.
    case nonStrict = "NON-STRICT"
    /// Not run: the driver does not speak the dialect, or a known failure.
    case skip = "SKIP"
    /// The harness or the driver failed: crash, hang, garbage output.
    case error = "ERROR"
}

/// One checked expectation.
public struct Finding: Sendable, Codable, Equatable {
    /// The expectation's key in the scenario file, e.g. `refreshes`.
    public var expectation: String
    public var passed: Bool
    /// Expected against observed, in a sentence.
    public var message: String
    /// Journal lines and driver outcomes that show it.
    public var evidence: [String]
    /// The rule it checks: an RFC section, the driver protocol, or the case's public reports.
    public var rule: String?
    /// `must` (a breach FAILs the case) or `should` (a breach is NON-STRICT).
    public var level: String?
    /// What it counted, against what the case allowed; causes are read from these.
    public var measured: [Measured]?
    /// The journal entries (`seq`) it points at: the picture marks them.
    public var entries: [Int]?

    public init(
        expectation: String, passed: Bool, message: String, evidence: [String], rule: String? = nil, level: String? = "must",
        measured: [Measured]? = nil, entries: [Int]? = nil
    ) {
        self.expectation = expectation
        self.passed = passed
        self.message = message
        self.evidence = evidence
        self.rule = rule
        self.level = level
        self.measured = measured
        self.entries = entries
    }

    /// Whether breaking it fails the case (rather than making it NON-STRICT).
    public var isMust: Bool { level != Scenario.Level.should.rawValue }
}

/// What the application saw for one call.
public struct CallOutcome: Sendable, Codable, Equatable {
    public var call: String
    public var request: String
    public var outcome: String
    public var status: Int?
    public var message: String?
    /// When the runner sent it and when the driver answered, in seconds since the case began.
    public var sent: Double?
    public var answered: Double?
    /// When the runner cancelled it (a `cancel` step), in seconds since the case began.
    public var cancelled: Double?
    /// The instance of the app's client that made it, when not the app's own
    /// (2 and on: its extension, widget; the `instances` extension); text
    /// reports and the picture say it beside `request`.
    public var instance: Int?

    public init(call: String, request: String, outcome: String, status: Int? = nil, message: String? = nil) {
        self.call = call
        self.request = request
        self.outcome = outcome
        self.status = status
        self.message = message
    }
}

public struct CaseResult: Sendable, Codable {
    public var id: String
    public var name: String
    public var profile: String
    public var level: String
    public var file: String
    public var verdict: Verdict
    /// Why it was skipped or errored; for a known failure, the listed reason.
    public var reason: String?
    public var findings: [Finding]
    public var calls: [CallOutcome]
    /// The whole journal of the case, one line per request.
    public var journal: [String]
    /// The same journal as data, tokens with their labels (the first 400
    /// and last 100 entries of a longer one, as `journal`).
    public var entries: [ReportedEntry]?
    public var driverStderr: String
    public var seconds: Double
    /// What the driver said it wraps, from its `hello` answer.
    public var driver: String?
    public var driverVersion: String?
    /// The driver's `hello` answer as it sent it (up to 2,000 characters):
    /// what a driver's author checks against docs/driver-protocol.schema.json.
    public var driverHello: String?
    /// SHA-256 of the scenario file the case came from.
    public var digest: String?
    /// The driver's expected-failures file lists this case and it did fail:
    /// the listed reason. The verdict is then SKIP, so the run stays green.
    public var knownFailure: String?
    /// The client behaviours its failed findings come from (`Causes`): a
    /// report groups case runs by them. nil when nothing failed.
    public var causes: [Cause]?
    /// What the report says beside the verdict: a fault rule of the case that never fired.
    public var notes: [String]?
    /// When the driver confirmed the app had signed the user out (a `logout` step), in seconds since the case began.
    public var signedOut: Double?
    /// The last journal entry (`seq`) the verdict read. Entries after it
    /// came once the case had ended (the driver's last answer, a short
    /// quiet wait): evidence, marked `late`, but no finding counted them.
    public var judgedThrough: Int?

    public init(
        id: String, name: String, profile: String, level: String, file: String, verdict: Verdict, reason: String? = nil,
        findings: [Finding], calls: [CallOutcome], journal: [String], entries: [ReportedEntry]? = nil, driverStderr: String,
        seconds: Double, driver: String? = nil, driverVersion: String? = nil, digest: String? = nil, knownFailure: String? = nil,
        causes: [Cause]? = nil, notes: [String]? = nil, signedOut: Double? = nil
    ) {
        self.id = id
        self.name = name
        self.profile = profile
        self.level = level
        self.file = file
        self.verdict = verdict
        self.reason = reason
        self.findings = findings
        self.calls = calls
        self.journal = journal
        self.entries = entries
        self.driverStderr = driverStderr
        self.seconds = seconds
        self.driver = driver
        self.driverVersion = driverVersion
        self.digest = digest
        self.knownFailure = knownFailure
        self.causes = causes
        self.notes = notes
        self.signedOut = signedOut
    }

    /// `1.1 [oauth2]`: how reports name a case run.
    public var label: String { "\(id) [\(profile)]" }
    public var failedFindings: [Finding] { findings.filter { !$0.passed } }
}

/// One journal entry as a line of evidence, its tokens by their labels.
func describe(_ entry: JournalEntry, start: Date, labels: TokenLabels, faults: [Int: String] = [:]) -> String {
    var line =
        "#\(entry.seq) +\(String(format: "%.3f", entry.realTime.timeIntervalSince(start)))s \(entry.method) \(entry.path) [\(entry.kind.rawValue)]"
    // Another host (a third party) is named, so evidence shows who got what.
    if Observation.isForeign(entry), let host = entry.host { line += " host=\(host)" }
    if let call = entry.call { line += " call=\(call)" }
    if let operation = entry.operation { line += " (\(operation))" }
    if !entry.presentsBearer && entry.presentsAuthorization || entry.accessToken == nil && entry.refreshToken == nil {
        line += " auth=\(entry.scheme)"
    }
    for token in [entry.accessToken, entry.refreshToken].compactMap({ $0 }) {
        line += " \(token.kind) \(labels.label(token.id)) \(token.state)"
    }
    line += entry.status == 0 ? " -> no answer" : " -> \(entry.status)"
    if let code = entry.errorCode { line += " \(code)" }
    // A 2xx says nothing of an error: the situation says which it was.
    if entry.answeredErrorIn2xx, let situation = entry.situation { line += " (\(situation))" }
    if let access = entry.issuedAccess { line += " issued access \(labels.label(access))" }
    if let refresh = entry.issuedRefresh { line += " issued refresh \(labels.label(refresh))" }
    if let applied = entry.mutationsApplied { line += " applied \(applied)" }
    if let fault = entry.fault { line += " (fault \(fault)\(faults[fault].map { ": \($0)" } ?? ""))" }
    if entry.undelivered { line += " (not delivered)" }
    return line
}
