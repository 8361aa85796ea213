/// Every name a finding can carry: the expectations' keys, and the checks
/// the runner makes by itself. Causes and reports refer to findings through
/// this type, so a misspelt name is a compile error, not a rule that never
/// matches (`FindingNameTests` checks it against the expectation registry).
public enum FindingName: String, Sendable, Codable, CaseIterable, Comparable {
    // The expectations a case states (ExpectationKinds.all).
    case superfluousRefreshes = "superfluous_refreshes"
    case refreshes
    case logins
    case outcomes
    case answeredWith = "answered_with"
    case unfoundedReauth = "unfounded_reauth"
    case attemptsPerCall = "attempts_per_call"
    case refreshTokenReuse = "refresh_token_reuse"
    case staleTokenUses = "stale_token_uses"
    case foreignRequestsWithToken = "foreign_requests_with_token"
    case maxRequests = "max_requests"
    case sameBodyOnRetry = "same_body_on_retry"
    case everyAttempt = "every_attempt"
    case retryAfter = "retry_after"
    case retriedWithNewToken = "retried_with_new_token"
    case requestsAfterLogout = "requests_after_logout"
    case oldLoginTokens = "old_login_tokens"
    case signedOutAtServer = "signed_out_at_server"
    case bodiesIntact = "bodies_intact"
    case mutationsPerCall = "mutations_per_call"
    case expiredTokenUses = "expired_token_uses"
    // Checks every case makes.
    case superfluousSignIns = "superfluous_sign_ins"
    case callsOnTheWire = "calls_on_the_wire"
    case appHeaders = "app_headers"
    // Steps that failed.
    case login
    case logout
    case waitFor = "wait_for"

    /// The name a finding carries (`check.refreshes` for a `check:` step's is `refreshes`).
    public init?(finding expectation: String) {
        self.init(rawValue: expectation.hasPrefix(Self.checkPrefix) ? String(expectation.dropFirst(Self.checkPrefix.count)) : expectation)
    }

    /// How a `check:` step's findings are named.
    static let checkPrefix = "check."

    public static func < (a: FindingName, b: FindingName) -> Bool { a.rawValue < b.rawValue }
}

/// What an expectation measured, as data: what it counted, what the case
/// allowed, what it saw and which way it missed. A cause is recognised from
/// these (a bound broken upward, an outcome kind in excess), never from a
/// finding's name alone.
public struct Measured: Sendable, Codable, Equatable {
    /// Which way a measurement missed what the case allowed.
    public enum Way: String, Sendable, Codable {
        /// More than the case allows.
        case over
        /// Fewer than the case requires.
        case under
    }

    /// What was counted: the expectation's subject (`refresh requests`,
    /// `attempts of c2`), or an outcome kind (`reauth_required`).
    public var subject: String
    /// What the case allowed, as a sentence fragment (`exactly 1`).
    public var expected: String
    public var saw: Int
    /// nil when the count was within what the case allowed.
    public var way: Way?
    /// The most the case allowed, when it set a bound (0: none at all).
    public var max: Int?

    /// What a finding failed for want of: no request (or call, or retry) it speaks of happened.
    public static let nothingToJudge = Measured(subject: "requests to judge", expected: "at least 1", saw: 0, way: .under)

    public init(subject: String, expected: String, saw: Int, way: Way?, max: Int? = nil) {
        self.subject = subject
        self.expected = expected
        self.saw = saw
        self.way = way
        self.max = max
    }
}

extension CountRange {
    /// `saw` measured against this range.
    func measure(_ subject: String, saw: Int) -> Measured {
        let way: Measured.Way? =
            if let max, saw > max { .over } else if let min, saw < min { .under } else { nil }
        return Measured(subject: subject, expected: text, saw: saw, way: way, max: max)
    }
}

extension Finding {
    /// The typed name; nil for a name this version does not know (a report of another version).
    public var name: FindingName? { FindingName(finding: expectation) }

    /// Whether one of its measurements missed `way` (for `subject`, when given).
    func missed(_ way: Measured.Way, subject: String? = nil) -> Bool {
        (measured ?? []).contains { $0.way == way && (subject == nil || $0.subject == subject) }
    }
}
