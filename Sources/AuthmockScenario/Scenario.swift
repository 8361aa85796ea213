import AuthmockCore
import AuthmockServer
import Foundation
import Yams

/// One conformance case, as written in a scenario file.
public struct Scenario: Sendable {
    public enum Level: String, Sendable { case must, should }

    public var id: String
    public var name: String
    public var description: String
    /// The dialects the case runs in; it runs once per profile.
    public var profiles: [String]
    public var level: Level
    public var server: ServerSettings
    public var steps: [Step]
    public var expect: Expectations
    /// Real seconds the whole case may take.
    public var timeout: Double
    /// Where it came from, for messages.
    public var file: String
}

/// Server settings a scenario overrides.
public struct ServerSettings: Sendable {
    public var accessTTL: Int?
    public var refreshTTL: Int?
    public var rotateRefresh: Bool?
    public var reuseGrace: Int?
    public var profileOptions = ProfileOptions()

    func apply(to options: inout ServerOptions) {
        if let accessTTL { options.tokens.accessTTL = accessTTL }
        if let refreshTTL { options.tokens.refreshTTL = refreshTTL }
        if let rotateRefresh { options.tokens.rotateRefreshTokens = rotateRefresh }
        if let reuseGrace { options.tokens.reuseGraceSeconds = reuseGrace }
        options.profileOptions = profileOptions
    }
}

/// A request an application makes through the client under test.
public struct CallSpec: Sendable {
    public var method: String
    public var path: String
    public var headers: [String: String]
    public var body: String?
}

public enum Step: Sendable {
    case login(username: String, password: String)
    /// `wait: false` sends without waiting for the answer.
    case request(CallSpec, wait: Bool)
    /// N copies of a request (or a list), all sent before any answer is awaited.
    case parallel([CallSpec])
    case advanceClock(seconds: Double)
    case expire(TokenSelector)
    case revoke(TokenSelector)
    case fault(FaultRule)
    case waitFor(WaitCondition)
    /// Real time: only for cases about the client's own clock.
    case sleep(seconds: Double)
    /// Expectations checked at this point, over everything so far.
    case check(Expectations)
}

public enum WaitCondition: Sendable {
    /// Every call sent so far has been answered.
    case allCalls
    /// At least this many requests of the kinds have arrived at the server
    /// (`answered`: and the server has made its answer, sent or held).
    case journal(kinds: Set<RouteKind>, count: Int, answered: Bool)
}

/// What a correct client does, checked against the journal and the outcomes.
public struct Expectations: Sendable {
    public struct Range: Sendable, Equatable {
        public var min: Int?
        public var max: Int?
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
    public enum Count: Sendable, Equatable {
        case exactly(Int)
        case all
    }
    public enum AuthorizationRule: String, Sendable { case bearer, present }

    public var refreshes: Range?
    public var outcomes: [String: Count] = [:]
    public var attemptsPerCall: Range?
    public var refreshTokenReuse: Range?
    public var staleTokenUses: Range?
    public var maxRequests: Int?
    public var sameBodyOnRetry: Bool?
    public var everyAttempt: AuthorizationRule?
    public var retryAfterSeconds: Double?
    public var retriedWithNewToken: Bool?
    public var logins: Range?
    public var foreignRequestsWithToken: Range?

    public var isEmpty: Bool {
        refreshes == nil && outcomes.isEmpty && attemptsPerCall == nil && refreshTokenReuse == nil && staleTokenUses == nil
            && maxRequests == nil && sameBodyOnRetry == nil && everyAttempt == nil && retryAfterSeconds == nil
            && retriedWithNewToken == nil && logins == nil && foreignRequestsWithToken == nil
    }
}

/// The format's definition: the decoder and the JSON Schema both come from it.
public enum ScenarioFormat {
    static let outcomeKinds = ["ok", "http_error", "reauth_required", "transport_error", "unsupported"]

    static let range = Shape.oneOf([
        .integer(minimum: 0),
        .object(ObjectSpec("range", [
            Field("min", .integer(minimum: 0), "at least this many"),
            Field("max", .integer(minimum: 0), "at most this many"),
        ])),
    ])

    static let request = ObjectSpec("request", [
        Field("method", .string(), "HTTP method (default GET)"),
        Field("path", .string(), required: true, "path under the server, e.g. /api/items; //foreign/... is the same server under another host name (a third party)"),
        Field("headers", .map(.string()), "headers the application sets; X-Authmock-Call is added by the runner"),
        Field("body", .string(), "request body, sent as is"),
        Field("wait", .boolean, "false: send and go on without waiting for the answer (default true)"),
    ])

    static let selector = ObjectSpec("selector", [
        Field("kind", .string(oneOf: ["access", "refresh", "all"]), "which tokens (default all)"),
        Field("subject", .string(), "only tokens of this user"),
        Field("family", .string(), "only tokens of this login"),
        Field("jti", .string(), "only the access token with this jti, or the refresh token with this id"),
    ])

    static let fault = ObjectSpec("fault rule", [
        Field("match", .object(ObjectSpec("match", [
            Field("method", .string(), "HTTP method"),
            Field("pathPrefix", .string(), "path prefix"),
            Field("kind", .string(oneOf: RouteKind.matchNames), "route kind: login, refresh, resource, ... or token for login and refresh"),
            Field("header", .object(ObjectSpec("header", [
                Field("name", .string(), required: true, "header name"),
                Field("value", .string(), "required value (absent: presence is enough)"),
            ])), "a header the request must carry"),
        ])), "which requests the rule fires on"),
        Field("times", .oneOf([.integer(minimum: 1), .string(oneOf: ["unlimited"])]), "how many times it fires (default 1)"),
        Field("action", .object(ObjectSpec("action", [
            Field("type", .string(oneOf: ["respond", "delay", "delay-response", "gather", "close-connection", "drop-response"]), required: true, "what the server does"),
            Field("status", .integer(minimum: 100), "respond: the status"),
            Field("headers", .map(.string()), "respond: headers"),
            Field("body", .string(), "respond: body"),
            Field("ms", .integer(minimum: 0), "delay, delay-response: milliseconds of real time; gather: the longest hold after the first arrival (default 2000)"),
            Field("count", .integer(minimum: 1), "gather: hold matching requests until this many have arrived"),
        ])), required: true, "what happens instead of the normal answer"),
    ])

    static let expectations = ObjectSpec("expect", [
        Field("refreshes", range, "refresh requests the server saw (a number is exact)"),
        Field("logins", range, "sign-in requests the server saw"),
        Field("outcomes", .map(.countOrAll, keys: outcomeKinds), "outcomes the application saw, by kind: a number, or all"),
        Field("attempts_per_call", range, "resource requests per application call"),
        Field("refresh_token_reuse", range, "refresh requests presenting an already rotated refresh token"),
        Field("stale_token_uses", range, "resource requests sent with an access token older than one the client had already received"),
        Field("max_requests", .integer(minimum: 1), "loop guard: requests of every kind, at most"),
        Field("same_body_on_retry", .boolean, "every attempt of a call carries the byte-identical body"),
        Field("every_attempt", .object(ObjectSpec("every_attempt", [
            Field("authorization", .string(oneOf: ["bearer", "present"]), required: true, "bearer: `Bearer <token>` on every resource attempt; present: some Authorization"),
        ])), "a rule every resource attempt follows"),
        Field("retry_after", .object(ObjectSpec("retry_after", [
            Field("min_seconds", .number(minimum: 0), required: true, "server-clock seconds between an answer with Retry-After and the next attempt of that call"),
        ])), "Retry-After is respected"),
        Field("retried_with_new_token", .boolean, "a call retried after a 401 carries a different access token on the retry"),
        Field("foreign_requests_with_token", range, "requests to another host (//foreign/...) that carried an Authorization header"),
    ])

    static let server = ObjectSpec("server", [
        Field("access_ttl", .integer(minimum: 1), "access-token lifetime, seconds"),
        Field("refresh_ttl", .integer(minimum: 1), "refresh-token lifetime, seconds"),
        Field("rotate_refresh", .boolean, "rotate refresh tokens (default true)"),
        Field("reuse_grace", .integer(minimum: 0), "seconds a rotated refresh token still works"),
        Field("oauth2_errors", .string(oneOf: ["strict", "rfc-lax"]), "oauth2 error style"),
        Field("rotation_header", .string(), "header-rotation: header carrying new access tokens"),
        Field("rotate_every", .integer(minimum: 1), "header-rotation: rotate on every Nth successful answer"),
        Field("rotation_grace", .integer(minimum: 0), "header-rotation: seconds an old access token still works"),
        Field("refresh_failure_status", .integer(minimum: 400), "reissue/renewal: status of a failed refresh"),
    ])

    static let steps: [Field] = [
        Field("login", .object(ObjectSpec("login", [
            Field("username", .string(), "default alice"),
            Field("password", .string(), "default wonderland"),
        ])), "sign in through the client"),
        Field("request", .object(request), "one application call"),
        Field("parallel", .object(ObjectSpec("parallel", [
            Field("count", .integer(minimum: 1), "copies of `request` to send at once"),
            Field("request", .object(request), "the request to copy"),
            Field("requests", .array(.object(request)), "or: a list of different requests"),
        ])), "calls sent at once, without waiting (how concurrent 401s are made)"),
        Field("advance_clock", .duration, "move the server clock forward"),
        Field("expire", .object(selector), "expire tokens now"),
        Field("revoke", .object(selector), "revoke tokens"),
        Field("fault", .object(fault), "add a fault rule (the control API's shape)"),
        Field("wait_for", .oneOf([
            .string(oneOf: ["all"]),
            .object(ObjectSpec("wait_for", [
                Field("kind", .string(oneOf: RouteKind.matchNames), required: true, "route kind to count in the journal"),
                Field("count", .integer(minimum: 1), required: true, "how many requests of that kind"),
                Field("answered", .boolean, "true: wait until the server has made its answers too (sent, or held by delay-response); default false: arrival is enough"),
            ])),
        ]), "all: until every call sent so far is answered; or until count requests of kind have arrived (answered or not; at most 5 s)"),
        Field("sleep", .duration, "real time; only for cases about the client's own clock"),
        Field("check", .object(expectations), "expectations checked at this point"),
    ]

    public static let scenario = ObjectSpec("scenario", [
        Field("id", .string(), required: true, "dotted case id, e.g. 1.1"),
        Field("name", .string(), required: true, "short title"),
        Field("description", .string(), required: true, "what the server does, what a correct client does, which real bug it catches"),
        Field("profile", .string(oneOf: Profiles.names), "the dialect it runs in"),
        Field("profiles", .array(.string(oneOf: Profiles.names)), "or: every dialect it runs in, once each"),
        Field("level", .string(oneOf: ["must", "should"]), "must: a broken expectation FAILs; should: NON-STRICT (default must)"),
        Field("timeout", .duration, "real seconds the case may take (default 20)"),
        Field("server", .object(server), "server settings"),
        Field("steps", .array(.choice(steps)), required: true, "what happens, in order"),
        Field("expect", .object(expectations), required: true, "what a correct client must show"),
    ])

    /// The JSON Schema of the scenario format.
    public static func jsonSchema() -> String {
        var root = SchemaWriter.schema(.object(scenario))
        root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        root["title"] = "authmock scenario"
        root["$comment"] = "Generated by `authmock schema` from Sources/AuthmockScenario/Scenario.swift; do not edit."
        let data = try! JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
