/// What `--judge` says of the traffic a server has seen so far: the suite's
/// expectations that need no scripted step, applied to what the client did
/// on its own (`GET /_authmock/verdicts`, `authmock ctl verdicts`, and the
/// file `--json` names at shutdown).
public struct TrafficVerdicts: Sendable, Codable, Equatable {
    /// `pass`: every expectation held; `fail`: one did not; `nothing-yet`:
    /// no token was handed out yet, so there is nothing to judge.
    public var verdict: String
    /// Requests of the client's judged, and the logins among them.
    public var requests: Int
    public var logins: Int
    /// One per expectation, in the suite's report order.
    public var findings: [Judged]
    /// What the failures come from (the suite's cause table), most telling first.
    public var causes: [NamedCause]

    public struct Judged: Sendable, Codable, Equatable {
        public var expectation: String
        public var passed: Bool
        /// Expected against observed, in a sentence.
        public var message: String
        /// Journal lines that show it, with token labels (`A1`, `L2.R1`).
        public var evidence: [String]
        /// The rule it checks.
        public var rule: String?
        /// The journal entries (`seq`) it points at.
        public var entries: [Int]?

        public init(expectation: String, passed: Bool, message: String, evidence: [String], rule: String?, entries: [Int]?) {
            self.expectation = expectation
            self.passed = passed
            self.message = message
            self.evidence = evidence
            self.rule = rule
            self.entries = entries
        }
    }

    public struct NamedCause: Sendable, Codable, Equatable {
        public var id: String
        public var title: String

        public init(id: String, title: String) {
            self.id = id
            self.title = title
        }
    }

    public init(verdict: String, requests: Int, logins: Int, findings: [Judged], causes: [NamedCause]) {
        self.verdict = verdict
        self.requests = requests
        self.logins = logins
        self.findings = findings
        self.causes = causes
    }
}
