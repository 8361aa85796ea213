public import AuthmockFileFormat
public import AuthmockDialect
public import AuthmockCore
public import AuthmockModel
public import DriverProtocol
import AuthmockServer
import Foundation
import Yams

/// One conformance case, as written in a scenario file.
public struct Scenario: Sendable {
    public enum Level: String, Sendable { case must, should }

    public var id: String
    public var name: String
    public var description: String
    /// The dialects the case runs in; it runs once per dialect.
    public var profiles: [String]
    public var level: Level
    public var server: ServerSettings
    public var steps: [Step]
    /// Expectations at the case's level: for a `must` case a breach FAILs.
    public var expect: Expectations
    /// Expectations whose breach is only wasteful, never wrong: NON-STRICT.
    public var should: Expectations?
    /// Public bug reports of libraries that got this wrong (`owner/repo#N`, or a URL).
    public var reports: [String]
    /// Real seconds the whole case may take.
    public var timeout: Double
    /// Where it came from, for messages.
    public var file: String
    /// SHA-256 of the file's text: reports from different authmock versions
    /// are comparable case by case only where this matches.
    public var digest: String = ""
    /// The case again with the token run out by the client's own clock (`clock_variant:`).
    public var clockVariant: ClockVariant?
    /// What is valid but cannot work as written (`validate` prints them):
    /// a fault rule that matches no request the runner sends.
    public var warnings: [ScenarioError] = []
    /// Where each step stands in the file, for what is found later against a dialect.
    var stepMarks: [(line: Int, column: Int)?] = []
    /// This case is a clock variant: its short token lifetimes are the client's to meet by its clock.
    public var isClockVariant = false
}

/// A case's variant for clients that refresh by their own clock: most SDKs
/// renew when `expires_in` runs out and never look at a 401, so a case that
/// expires the token only on the server clock never reaches its subject
/// (rotation, reuse, lost answers, bodies) for them. The variant gives every
/// access token a 2 s life and waits for it in real time wherever the case
/// moves the server clock, so the token runs out by both clocks: a client
/// that refreshes by its clock, on a 401, or both, meets the same subject.
public struct ClockVariant: Sendable {
    /// The variant's dialects (default: the case's).
    public var profiles: [String]?
    /// Settings over the case's `server:` (after `access_ttl: 2`).
    public var server: ServerSettings
    /// The variant's expectations instead of the case's (nil: the case's):
    /// a client that renews before sending makes no retry, so an expectation
    /// about retries has nothing to judge there.
    public var expect: Expectations?
    public var should: Expectations?

    /// Every access token's life in the variant, seconds.
    public static let accessSeconds = 2
    /// Real seconds waited where the case advances the server clock: the
    /// token's life and a second of slack for clients that keep whole-second
    /// clocks. A client with an early-refresh margin longer than the token's
    /// life refreshes before every call, which the necessity rules allow (early).
    public static let waitSeconds = 3.1
    /// What the variant's id adds to the case's.
    public static let idSuffix = "-clock"
}

extension Scenario {
    /// Real seconds the case waits at the least (its `sleep` steps): the
    /// runner starts the longest waits first.
    public var realSeconds: Double {
        steps.reduce(0) { total, step in
            guard case .sleep(let seconds) = step else { return total }
            return total + seconds
        }
    }

    /// The case and its clock variant, if it declares one.
    public var withVariants: [Scenario] { [self] + (clockVariant.map { [clockVariantCase($0)] } ?? []) }

    func clockVariantCase(_ variant: ClockVariant) -> Scenario {
        var copy = self
        copy.clockVariant = nil
        copy.isClockVariant = true
        copy.id += ClockVariant.idSuffix
        copy.name += " (the token expires by the client's clock)"
        copy.profiles = variant.profiles ?? profiles
        copy.server.values["access_ttl"] = .integer(ClockVariant.accessSeconds)
        copy.server.values["sign_in_access_ttl"] = nil
        for (key, value) in variant.server.values { copy.server.values[key] = value }
        // A variant may set its own short life (`server: {access_ttl: 3}`): said as set.
        let life: Int
        if case .integer(let seconds)? = copy.server["access_ttl"] { life = seconds } else { life = ClockVariant.accessSeconds }
        var lifetimes = "every access token lives \(life) s"
        if case .integer(let first)? = copy.server["sign_in_access_ttl"], case .integer(let refreshed)? = copy.server["access_ttl"],
            first != refreshed
        {
            lifetimes = "the access token issued at sign-in lives \(first) s and refreshed ones \(refreshed) s"
        }
        copy.description +=
            " Clock variant: \(lifetimes), and where the case moves the server clock it waits \(ClockVariant.waitSeconds) s of real time instead (after the faults and revocations that follow), so the token runs out by the client's own clock as well as the server's, and a client that renews on a timer meets what the case sets up."
        copy.steps = Self.waitingInRealTime(steps)
        copy.timeout += copy.realSeconds - realSeconds
        if let expect = variant.expect { copy.expect = expect }
        if let should = variant.should { copy.should = should.isEmpty ? nil : should }
        return copy
    }
}

extension Scenario {
    /// A clock variant for a client that renews `margin` seconds before
    /// expiry: its short-lived access tokens (sign-in's and refreshed ones
    /// that run out within the variant's wait, `ClockVariant.waitSeconds`) live `margin` longer, so they
    /// run out by that client's clock where they would for a client without
    /// one, instead of every token it gets needing renewing at once (which
    /// judges the margin against the case, not the refresh logic).
    public func lengthened(forRenewalMargin margin: Double) -> Scenario {
        guard isClockVariant, margin > 0 else { return self }
        var copy = self
        let extra = Int(margin.rounded(.up))
        for key in ["access_ttl", "sign_in_access_ttl"] {
            guard case .integer(let seconds)? = copy.server.values[key], Double(seconds) <= ClockVariant.waitSeconds else { continue }
            copy.server.values[key] = .integer(seconds + extra)
        }
        copy.description +=
            " The driver renews tokens \(extra) s before they expire (its hello's renewalMargin), so these short-lived tokens live \(extra) s longer."
        return copy
    }

    /// The variant's steps: each `advance_clock` becomes a real-time wait,
    /// after the server-side steps that follow it up to the next client
    /// action (faults, revocations, expiries). A client that renews on a
    /// timer refreshes during the wait, and must meet the revoked refresh
    /// token or the refresh fault there, as a client that renews before
    /// sending meets them after it; on the server clock the order of those
    /// steps and the advance makes no difference.
    static func waitingInRealTime(_ steps: [Step]) -> [Step] {
        var out: [Step] = []
        var index = steps.startIndex
        while index < steps.endIndex {
            guard case .advanceClock = steps[index] else {
                out.append(steps[index])
                index += 1
                continue
            }
            index += 1
            while index < steps.endIndex, steps[index].setsTheServerUp {
                out.append(steps[index])
                index += 1
            }
            out.append(.sleep(seconds: ClockVariant.waitSeconds))
        }
        return out
    }
}

extension Step {
    /// A step that changes what the server will answer, with no client action.
    var setsTheServerUp: Bool {
        switch self {
        case .fault, .clearFaults, .revoke, .expire: true
        default: false
        }
    }
}

/// A request an application makes through the client under test.
public struct CallSpec: Sendable {
    public var method: String
    public var path: String
    public var headers: [String: String]
    public var body: String?
    /// The app hands the body over as a one-shot stream (driver capability `bodyStream`).
    public var bodyStream = false
    /// A GraphQL operation (`graphql:`), for a driver whose client speaks GraphQL (capability `graphql`).
    public var graphQL = false
    /// The instance of the app's client that makes the call (the `instances`
    /// extension): nil is the app itself (instance 1); 2 and on, its
    /// extension, widget or second process over the same token store.
    public var instance: Int? = nil

    /// The instance's number: 1, the app, when none is named.
    var instanceNumber: Int { instance ?? 1 }
    /// The instance when it is another than the app's own (its extension).
    var otherInstance: Int? { instanceNumber > 1 ? instanceNumber : nil }
}

public enum Step: Sendable {
    /// `openid`: as an OpenID Connect client (the `oidc` extension);
    /// `expect`: the outcome the sign-in must end in (default: signed in).
    /// `username` nil: the server's default account (`alice`, or a dialect's `sign_in.default_user`).
    case login(username: String?, password: String, openID: Bool = false, expect: OutcomeKind? = nil)
    /// The app signs the user out (the driver protocol's `logout` extension).
    case logout
    /// The app cancels a call in flight (the `cancel` extension): call number
    /// `call` (1 for the case's first), nil for the latest still unanswered.
    case cancel(call: Int?)
    /// `wait: false` sends without waiting for the answer.
    case request(CallSpec, wait: Bool)
    /// N copies of a request (or a list), all sent before any answer is awaited.
    case parallel([CallSpec])
    case advanceClock(seconds: Double)
    /// The server clock's offset from real time (negative: behind), as `clock/set`.
    case setClock(offsetSeconds: Double)
    case expire(TokenSelector)
    case revoke(TokenSelector)
    case fault(FaultRule)
    /// Removes every fault rule, as `DELETE /_authmock/faults`: what they
    /// hold goes on at once. A hold the runner ends after its own steps
    /// (a cancel, a sign-out) lasts however late the runner is.
    case clearFaults
    /// A new signing key (RS256/ES256); the old one verifies for `graceSeconds` (nil: `key_grace`).
    case rotateKeys(graceSeconds: Double?)
    case waitFor(WaitCondition)
    /// Real time: only for cases about the client's own clock, or the
    /// window a broken client acts in.
    case sleep(seconds: Double)
    /// Expectations checked at this point, over everything so far.
    case check(Expectations)
}

public enum WaitCondition: Sendable {
    /// Every call sent so far has been answered.
    case allCalls
    /// At least this many requests of the kinds have arrived at the server
    /// (`answered`: and the server has made its answer, sent or held;
    /// `sinceLastRequest`: counted from when the latest call was sent).
    case journal(kinds: Set<RouteKind>, count: Int, answered: Bool, sinceLastRequest: Bool = false)
}

/// The format's definition: the decoder and the JSON Schema both come from it.
public enum ScenarioFormat {

    static let request = ObjectSpec(
        "request",
        [
            Field("method", .string(), "HTTP method (default GET)"),
            Field(
                "path", .string(),
                "path under the server, e.g. /api/items; //foreign/... is the same server under another host name (a third party); required unless `graphql` is given"
            ),
            Field("headers", .map(.string()), "headers the application sets; X-Authmock-Call is added by the runner"),
            Field("body", .string(), "request body, sent as is"),
            Field(
                "graphql", .object(graphQL),
                "a GraphQL operation: POST to `path` (default /graphql) with the JSON body {query, operationName, variables}; needs a driver with the `graphql` capability (SKIP without)"
            ),
            Field(
                "body_stream", .boolean,
                "true: the app hands the body to the library as a stream it can read once (driver capability `bodyStream`; a driver without it is SKIP)"
            ),
            Field(
                "instance", .integer(minimum: 1),
                "which instance of the app's client makes the call, over one token store: 1 the app (default), 2 and on its extension, widget or second process (driver capability `instances`; a driver without it is SKIP)"
            ),
            Field("wait", .boolean, "false: send and go on without waiting for the answer (default true)"),
        ])

    static let graphQL = ObjectSpec(
        "graphql",
        [
            Field("query", .string(), required: true, "the GraphQL document"),
            Field("operation_name", .string(), "`operationName`, for a document with several operations"),
            Field("variables", .map(.oneOf([.string(), .number(), .boolean])), "`variables`: names to strings, numbers or booleans"),
        ])

    static let selector = ObjectSpec(
        "selector",
        [
            Field("kind", .string(oneOf: ["access", "refresh", "all"]), "which tokens (default all)"),
            Field("subject", .string(), "only tokens of this user"),
            Field("family", .string(), "only tokens of this login"),
            Field("jti", .string(), "only the access token with this jti, or the refresh token with this id"),
        ])

    static let fault = ObjectSpec(
        "fault rule",
        [
            Field(
                "match",
                .object(
                    ObjectSpec(
                        "match",
                        [
                            Field("method", .string(), "HTTP method"),
                            Field("pathPrefix", .string(), "path prefix"),
                            Field(
                                "kind", .oneOf([.string(oneOf: RouteKind.matchNames), .array(.string(oneOf: RouteKind.matchNames))]),
                                "route kind: login, refresh, resource, ... or token for login and refresh; or a list of them"),
                            Field(
                                "header",
                                .object(
                                    ObjectSpec(
                                        "header",
                                        [
                                            Field("name", .string(), required: true, "header name"),
                                            Field("value", .string(), "required value (absent: presence is enough)"),
                                        ])), "a header the request must carry"),
                        ])), "which requests the rule fires on"),
            Field("times", .oneOf([.integer(minimum: 1), .string(oneOf: ["unlimited"])]), "how many times it fires (default 1)"),
            Field(
                "action",
                .object(
                    ObjectSpec(
                        "action",
                        [
                            Field("type", .string(oneOf: FaultRule.actionTypes), required: true, "what the server does")
                        ] + FaultRule.actionFields.map(actionField))), required: true, "what happens instead of the normal answer"),
        ])

    /// A fault action's field (`FaultRule.actionFields`) in the format's terms.
    static func actionField(_ field: FaultRule.ActionField) -> Field {
        let shape: Shape =
            switch field.value {
            case .integer(let minimum): .integer(minimum: minimum)
            case .string: .string()
            case .stringMap: .map(.string())
            case .situation: .string(oneOf: Situation.answerableKeys)
            }
        return Field(field.name, shape, field.doc)
    }

    static var expectations: ObjectSpec { ExpectationKinds.spec }

    /// The settings a scenario may override, from the one settings table.
    static var server: ObjectSpec { ServerSettings.spec("server") }

    static let steps: [Field] = [
        Field(
            "login",
            .object(
                ObjectSpec(
                    "login",
                    [
                        Field("username", .string(), "default the server's account: alice, or the dialect's `sign_in.default_user`"),
                        Field("password", .string(), "default wonderland"),
                        Field(
                            "openid", .boolean,
                            "true: sign in as an OpenID Connect client (code flow with a nonce; driver protocol extension `oidc`, a driver without it is SKIP)"
                        ),
                        Field(
                            "expect", .string(oneOf: ["ok", "reauth_required", "http_error"]),
                            "the outcome the sign-in must end in (default ok): reauth_required when the client must refuse what it got"),
                    ])), "sign in through the client"),
        Field(
            "logout", .object(ObjectSpec("logout", [])),
            "the app signs the user out (driver protocol extension `logout`; a driver without it is SKIP)"),
        Field(
            "cancel",
            .object(
                ObjectSpec(
                    "cancel",
                    [
                        Field(
                            "call", .integer(minimum: 1),
                            "which call: 1 for the case's first request, and so on (default: the latest not yet answered)")
                    ]
                )),
            "the app cancels a call in flight: its screen closed, its task cancelled (driver protocol extension `cancel`; a driver without it is SKIP)"
        ),
        Field("request", .object(request), "one application call"),
        Field(
            "parallel",
            .object(
                ObjectSpec(
                    "parallel",
                    [
                        Field("count", .integer(minimum: 1), "copies of `request` to send at once"),
                        Field("request", .object(request), "the request to copy"),
                        Field("requests", .array(.object(request)), "or: a list of different requests"),
                    ])), "calls sent at once, without waiting (how concurrent 401s are made)"),
        Field("advance_clock", .duration, "move the server clock forward"),
        Field("set_clock", .number(), "set the server clock's offset from real time in seconds, negative for behind (a device clock that is wrong)"),
        Field("expire", .object(selector), "expire tokens now"),
        Field("revoke", .object(selector), "revoke tokens"),
        Field("fault", .object(fault), "add a fault rule (the control API's shape)"),
        Field(
            "clear_faults", .object(ObjectSpec("clear_faults", [])),
            "remove every fault rule, as `DELETE /_authmock/faults`: the requests and answers they hold go on at once"),
        Field(
            "rotate_keys",
            .object(ObjectSpec("rotate_keys", [Field("grace_seconds", .number(), "how long the old key still verifies (default key_grace)")])),
            "a new signing key, as `POST /_authmock/keys/rotate` (needs signing_alg RS256 or ES256)"),
        Field(
            "wait_for",
            .oneOf([
                .string(oneOf: ["all"]),
                .object(
                    ObjectSpec(
                        "wait_for",
                        [
                            Field("kind", .string(oneOf: RouteKind.matchNames), required: true, "route kind to count in the journal"),
                            Field("count", .integer(minimum: 1), required: true, "how many requests of that kind"),
                            Field(
                                "answered", .boolean,
                                "true: wait until the server has made its answers too (sent, or held by delay-response); default false: arrival is enough"
                            ),
                            Field(
                                "since_last_request", .boolean,
                                "true: count only requests that arrived after the latest call was sent (the refresh that call started, whatever refreshes came before); not with `answered`"
                            ),
                        ])),
            ]), "all: until every call sent so far is answered; or until count requests of kind have arrived (answered or not; at most 5 s)"),
        Field("sleep", .duration, "real time; only for cases about the client's own clock, or the window a broken client acts in"),
        Field("check", .object(expectations), "expectations checked at this point"),
    ]

    public static let scenario = ObjectSpec(
        "scenario",
        [
            Field("id", .string(), required: true, "dotted case id, e.g. 1.1"),
            Field("name", .string(), required: true, "short title"),
            Field("description", .string(), required: true, "what the server does, what a correct client does, which real bug it catches"),
            Field("profile", .profile, "the dialect it runs in: a built-in profile, or a declared dialect's name (run with --dialect FILE)"),
            Field("profiles", .array(.profile), "or: every dialect it runs in, once each"),
            Field("level", .string(oneOf: ["must", "should"]), "must: a broken expectation FAILs; should: NON-STRICT (default must)"),
            Field("timeout", .duration, "real seconds the case may take (default 20)"),
            Field("server", .object(server), "server settings"),
            Field("steps", .array(.choice(steps)), required: true, "what happens, in order"),
            Field("reports", .array(.string()), "public bug reports of libraries that got this wrong: owner/repo#N or a URL"),
            Field("expect", .object(expectations), required: true, "what a correct client shows; a breach FAILs a must case"),
            Field(
                "should", .object(expectations), "what a correct client should also show: a breach is NON-STRICT, never FAIL (wasteful, not wrong)"),
            Field(
                "clock_variant",
                .object(
                    ObjectSpec(
                        "clock_variant",
                        [
                            Field("profiles", .array(.profile), "the variant's profiles (default: the case's)"),
                            Field("server", .object(server), "settings over the case's `server:` (the variant sets access_ttl: 2 first)"),
                            Field("expect", .object(expectations), "the variant's expectations instead of the case's (default: the case's)"),
                            Field(
                                "should", .object(expectations),
                                "the variant's should-expectations instead of the case's; {} for none (default: the case's)"),
                        ])),
                "also run the case as ID-clock: every access token lives 2 s and each `advance_clock` becomes 3.1 s of real time, so the token runs out by the client's own clock too (clients that refresh by expires_in, never on a 401, meet the case's subject)"
            ),
        ])

    /// The JSON Schema of the scenario format.
    public static func jsonSchema() -> String {
        SchemaWriter.document(scenario, title: "authmock scenario", source: "`authmock schema` from Sources/AuthmockScenario/Scenario.swift")
    }
}

extension Scenario {
    /// Whether the case runs on a declared dialect (`authmock run --dialect`):
    /// where it runs on a built-in dialect like it. One without a refresh
    /// endpoint (`via: resources`) runs the cases of one without; one that
    /// refreshes at an endpoint on a status signal, those of one that does
    /// (a 401 for expired and revoked alike); one whose signal is the code, those that run on both a
    /// code-signalled built-in and a status-signalled one, and the
    /// code-signalled built-in's own (5.6: a revoked token's code is no
    /// reason to refresh) where its revoked token's code is not the
    /// expired one's. A case about the sign-out endpoint runs wherever there is one.
    public func applies(to dialect: DialectDescription) -> Bool {
        let like = profiles.compactMap(BuiltinDialects.description)
        if dialect.refresh.onResources { return like.contains { $0.refresh.onResources } }
        if expect.items.contains(where: { $0 is SignedOutAtServerExpectation }) { return dialect.signOut != nil }
        let atEndpoint = like.filter { !$0.refresh.onResources }
        let byStatus = atEndpoint.contains { !$0.signalsExpiryByCode }, byCode = atEndpoint.contains(where: \.signalsExpiryByCode)
        if dialect.signalsExpiryByCode { return byCode && (byStatus || dialect.tellsRevokedFromExpiredByCode) }
        return byStatus
    }

    /// The case's fault rules that can never fire on `dialect` (`validate
    /// --dialect`): a path prefix under none of the routes it serves, or a
    /// route kind it has no request of (a sign-out where it has none, a
    /// refresh endpoint where the refresh rides on resources).
    public func warnings(on dialect: DialectDescription) -> [ScenarioError] {
        let fixed =
            [dialect.signIn.path, dialect.refresh.path, dialect.signOut?.path ?? ""].filter { !$0.isEmpty }
            + Array((dialect.documents ?? [:]).keys) + ["/health", "/metrics", "/.well-known/jwks.json"]
            + (dialect.jwt?.servedJWKSPath.map { [$0] } ?? [])
        // Any path under these is served (the API, GraphQL).
        let open = ["/api/", "/graphql"]
        var kinds: Set<RouteKind> = [.login, .refresh, .resource, .health, .metadata, .other]
        if dialect.signOut != nil { kinds.insert(.revoke) }
        var found: [ScenarioError] = []
        for (index, step) in steps.enumerated() {
            guard case .fault(let rule) = step else { continue }
            let mark = index < stepMarks.count ? stepMarks[index] : nil
            func warn(_ message: String) {
                found.append(ScenarioError(file: file, line: mark?.line ?? 1, column: mark?.column ?? 1, message: message))
            }
            if let prefix = rule.match.pathPrefix, !prefix.hasPrefix("//"),
                !fixed.contains(where: { $0.hasPrefix(prefix) }) && !open.contains(where: { $0.hasPrefix(prefix) || prefix.hasPrefix($0) })
            {
                warn(
                    "fault: match pathPrefix \(prefix) is under no path \(dialect.name) serves (\((fixed.prefix(3) + open).joined(separator: ", ")), ...), so this fault never fires there"
                )
            }
            if let wanted = rule.match.kinds, wanted.isDisjoint(with: kinds) {
                warn(
                    "fault: match kind \(wanted.map(\.rawValue).sorted().joined(separator: ", ")) never arrives on \(dialect.name)\(wanted.contains(.revoke) ? " (it has no `sign_out`)" : ""), so this fault never fires there"
                )
            }
        }
        return found
    }

    /// Whether the case's id matches `pattern`: `1.1`, or a glob (`3.*`, `1.?`).
    public func hasID(matching pattern: String) -> Bool {
        let p = Array(pattern), t = Array(id)
        func match(_ i: Int, _ j: Int) -> Bool {
            if i == p.count { return j == t.count }
            if p[i] == "*" { return (j...t.count).contains { match(i + 1, $0) } }
            guard j < t.count, p[i] == "?" || p[i] == t[j] else { return false }
            return match(i + 1, j + 1)
        }
        return match(0, 0)
    }

    /// The dialects the case runs on, given the dialects asked for (every
    /// one of the case's own when none is) and the declared dialects: the
    /// built-in ones it names (with declared dialects only those asked for),
    /// the declared ones it names, and every other declared one it applies to.
    public func runs(onProfiles asked: [String], dialects: [String: LoadedDialect]) -> [String] {
        let builtIn =
            dialects.isEmpty || !asked.isEmpty
            ? profiles.filter { BuiltinSuite.caseDialects.contains($0) && (asked.isEmpty || asked.contains($0)) } : []
        let named = profiles.filter { dialects[$0] != nil }
        let applicable = dialects.values.filter { !named.contains($0.description.name) && applies(to: $0.description) }
        return builtIn + named + applicable.map(\.description.name).sorted()
    }
}

extension Scenario {
    /// A case server's access-token lifetime unless the case sets
    /// `access_ttl`: an hour, as most identity providers issue them. SDKs
    /// renew a token ahead of its expiry by margins of up to five minutes
    /// (some SDKs); a shorter default would have them renew every
    /// fresh token, a verdict on their margin rather than their refresh logic.
    public static let caseAccessSeconds = 3600
}
