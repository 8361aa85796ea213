public import Foundation

/// A dialect described as data: a team's own backend, written as a dialect
/// file (docs/dialects.md). It says where sign-in and refresh live, where the
/// tokens travel and what every answer looks like. The server serves it
/// (`DeclaredProfile`), and the runner hands it to drivers in `hello`
/// (`dialect`, driver-protocol.md), so a client can be configured from it.
/// Its JSON is the dialect file's own shape with every default filled in.
public struct DialectDescription: Sendable, Codable, Equatable {
    public var name: String
    public var summary: String
    public var signIn: SignIn
    public var refresh: Refresh
    /// The answer to a sign-in or refresh that issued tokens.
    public var tokens: AnswerTemplate
    public var errors: Errors
    /// The body of every successful resource answer around the resource's
    /// own JSON (`{data}`), for backends that wrap every answer; nil: as it is.
    public var resources: Template?

    enum CodingKeys: String, CodingKey {
        case name = "dialect", summary, signIn = "sign_in", refresh, tokens, errors, resources
    }

    public init(name: String, summary: String, signIn: SignIn, refresh: Refresh, tokens: AnswerTemplate, errors: Errors, resources: Template? = nil) {
        self.name = name
        self.summary = summary
        self.signIn = signIn
        self.refresh = refresh
        self.tokens = tokens
        self.errors = errors
        self.resources = resources
    }

    /// What tells an endpoint's requests apart from another's on the same
    /// method and path: query parameters (a grant type), headers (a JSON 1.1
    /// target) and body fields, each with the value it must have. A client
    /// sends them; the server classifies by them.
    public struct Match: Sendable, Codable, Equatable {
        public var query: [String: String]
        public var headers: [String: String]
        public var body: [String: String]

        public init(query: [String: String] = [:], headers: [String: String] = [:], body: [String: String] = [:]) {
            self.query = query
            self.headers = headers
            self.body = body
        }

        public var isEmpty: Bool { query.isEmpty && headers.isEmpty && body.isEmpty }
    }

    public enum BodyEncoding: String, Sendable, Codable, CaseIterable {
        /// A JSON object; fields may be nested (`auth.username`).
        case json
        /// `application/x-www-form-urlencoded`.
        case form
    }

    public struct SignIn: Sendable, Codable, Equatable {
        public var method: String
        public var path: String
        public var match: Match
        public var encoding: BodyEncoding
        /// The fields holding the user name and the password.
        public var username: String
        public var password: String

        public init(method: String, path: String, match: Match = Match(), encoding: BodyEncoding, username: String, password: String) {
            self.method = method
            self.path = path
            self.match = match
            self.encoding = encoding
            self.username = username
            self.password = password
        }
    }

    public struct Refresh: Sendable, Codable, Equatable {
        public var method: String
        public var path: String
        public var match: Match
        public var encoding: BodyEncoding
        public var refreshToken: TokenLocation
        /// Set when the refresh carries the (possibly expired) access token too.
        public var accessToken: TokenLocation?
        /// A second place the same access token travels (a Bearer header
        /// beside a body field); the two must be the same token.
        public var accessTokenCopy: TokenLocation?
        /// The refresh's own answer where it differs from sign-in's (`tokens`).
        public var tokens: AnswerTemplate?
        /// What `{refresh_token}` says when rotation is off; nil: left out.
        public var unrotatedRefreshToken: UnrotatedRefreshToken?
        /// `resources`: no refresh endpoint (`method` and `path` are empty);
        /// the refresh token rides on an ordinary request in place of the
        /// access token. nil: an endpoint.
        public var via: Via?
        /// With `via: resources`, the response header that carries the new
        /// access token (nil: `Authorization` with `Bearer`).
        public var renewedAccessToken: TokenLocation?

        enum CodingKeys: String, CodingKey {
            case method, path, match, encoding, refreshToken = "refresh_token", accessToken = "access_token", accessTokenCopy = "access_token_copy"
            case tokens, unrotatedRefreshToken = "unrotated_refresh_token", via, renewedAccessToken = "renewed_access_token"
        }

        /// Where a refresh happens.
        public enum Via: String, Sendable, Codable, CaseIterable {
            /// A request of its own to the refresh endpoint.
            case endpoint
            /// Any resource request, presenting the refresh token where the
            /// access token goes; its answer carries a new access token.
            case resources
        }

        /// Whether the refresh token rides on resource requests (no endpoint).
        public var onResources: Bool { via == .resources }

        /// The response header of a renewed access token and its scheme.
        public var renewedHeader: (name: String, scheme: String?) {
            if case .header(let name, let scheme)? = renewedAccessToken { return (name, scheme) }
            return ("Authorization", "Bearer")
        }

        public init(
            method: String, path: String, match: Match = Match(), encoding: BodyEncoding, refreshToken: TokenLocation, accessToken: TokenLocation?,
            accessTokenCopy: TokenLocation? = nil, tokens: AnswerTemplate? = nil, unrotatedRefreshToken: UnrotatedRefreshToken? = nil,
            via: Via? = nil, renewedAccessToken: TokenLocation? = nil
        ) {
            self.via = via
            self.renewedAccessToken = renewedAccessToken
            self.method = method
            self.path = path
            self.match = match
            self.encoding = encoding
            self.refreshToken = refreshToken
            self.accessToken = accessToken
            self.accessTokenCopy = accessTokenCopy
            self.tokens = tokens
            self.unrotatedRefreshToken = unrotatedRefreshToken
        }
    }

    /// A refresh answer's `{refresh_token}` when the server does not rotate.
    public enum UnrotatedRefreshToken: String, Sendable, Codable, CaseIterable {
        /// Its member is left out: the client keeps the one it has.
        case leftOut = "left_out"
        /// The refresh token the client sent, said again.
        case repeated
    }

    /// Where a token travels in a request: `{"field": NAME}`, `{"header":
    /// NAME, "scheme": WORD}`, `{"cookie": NAME}` or `{"query": NAME}`.
    public enum TokenLocation: Sendable, Codable, Equatable {
        /// A body field (a dotted path in a JSON body).
        case field(String)
        /// A header, its value after `scheme ` when a scheme is given.
        case header(String, scheme: String?)
        case cookie(String)
        /// A query parameter of the request's URL.
        case query(String)

        enum CodingKeys: String, CodingKey { case field, header, scheme, cookie, query }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            if let name = try c.decodeIfPresent(String.self, forKey: .field) {
                self = .field(name)
            } else if let name = try c.decodeIfPresent(String.self, forKey: .header) {
                self = .header(name, scheme: try c.decodeIfPresent(String.self, forKey: .scheme))
            } else if let name = try c.decodeIfPresent(String.self, forKey: .query) {
                self = .query(name)
            } else {
                self = .cookie(try c.decode(String.self, forKey: .cookie))
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .field(let name): try c.encode(name, forKey: .field)
            case .header(let name, let scheme):
                try c.encode(name, forKey: .header)
                try c.encodeIfPresent(scheme, forKey: .scheme)
            case .cookie(let name): try c.encode(name, forKey: .cookie)
            case .query(let name): try c.encode(name, forKey: .query)
            }
        }
    }

    /// A success answer: status, headers and body, each a template.
    public struct AnswerTemplate: Sendable, Codable, Equatable {
        public var status: Int
        public var headers: [String: Template]
        public var body: Template

        public init(status: Int, headers: [String: Template], body: Template) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    public struct Errors: Sendable, Codable, Equatable {
        /// The body of every error answer (`{code}`, `{message}`, `{status}`).
        public var body: Template
        /// Answers by situation key or group (docs/dialects.md).
        public var answers: [String: DeclaredError]

        public init(body: Template, answers: [String: DeclaredError]) {
            self.body = body
            self.answers = answers
        }
    }

    /// One documented error of the dialect.
    public struct DeclaredError: Sendable, Codable, Equatable {
        public var status: Int
        /// Said as `{code}`: a string or a number, as the file wrote it.
        public var code: JSONValue
        public var message: String
        public var headers: [String: Template]
        /// Said after the message in place of the situation's own detail; empty: nothing said.
        public var detail: String?
        /// When the backend answers this, for the error reference.
        public var when: String?
        /// This answer's own body, in place of `errors.body` (a backend whose
        /// errors differ in shape: DRF's resource 401s list `messages`).
        public var body: Template?

        public init(
            status: Int, code: JSONValue, message: String, headers: [String: Template], detail: String? = nil, when: String? = nil,
            body: Template? = nil
        ) {
            self.status = status
            self.code = code
            self.message = message
            self.headers = headers
            self.detail = detail
            self.when = when
            self.body = body
        }
    }
}

/// What a template can say about an answer.
public enum Placeholder: String, Sendable, CaseIterable {
    case accessToken = "access_token"
    case refreshToken = "refresh_token"
    case expiresIn = "expires_in"
    case expiresAt = "expires_at"
    case refreshExpiresIn = "refresh_expires_in"
    case tokenType = "token_type"
    case user
    case idToken = "id_token"
    case code, message, status
    /// A resource's own JSON answer, in `resources`.
    case data

    /// Those a success answer, an error answer and a resource answer can say.
    public static let success: [Placeholder] = [.accessToken, .refreshToken, .expiresIn, .expiresAt, .refreshExpiresIn, .tokenType, .user, .idToken]
    public static let error: [Placeholder] = [.code, .message, .status]
    public static let resource: [Placeholder] = [.data]

    public var doc: String {
        switch self {
        case .accessToken: "the new access token"
        case .refreshToken: "the new refresh token; with rotation off there is none, and its member is left out (the client keeps its own)"
        case .expiresIn: "the access token's lifetime in seconds (a number; `{expires_in:string}` for a string)"
        case .expiresAt: "when the access token expires, seconds since 1970 on the server clock"
        case .refreshExpiresIn: "the refresh token's lifetime in seconds"
        case .tokenType: "`Bearer`"
        case .user: "the signed-in user's name"
        case .idToken: "an OpenID Connect id token (declared dialects issue none: its member is left out)"
        case .code: "the error's code, a string or a number as the file wrote it"
        case .message: "the error's message, with its detail after a colon"
        case .status: "the HTTP status, a number"
        case .data: "the resource's own JSON answer (`/api/me`, an echo)"
        }
    }
}

/// A JSON value with `{placeholder}`s, parsed once. Its JSON is the value as
/// the dialect file wrote it.
public indirect enum Template: Sendable, Codable, Equatable {
    case value(JSONValue)
    /// A string that is one placeholder: its value keeps its type (a number
    /// stays a number) unless `asString` (`{expires_in:string}`).
    case placeholder(Placeholder, asString: Bool)
    /// A string with placeholders inside text.
    case text([TextPiece])
    case object([String: Template])
    case array([Template])

    public enum TextPiece: Sendable, Equatable {
        case literal(String)
        case placeholder(Placeholder)
    }

    /// Why a string is not a template.
    public struct Problem: Error, Sendable {
        public let message: String
    }

    /// Reads `{name}` and `{name:string}` in a string; `allowed` are the placeholders it may use.
    public static func parse(_ text: String, allowed: [Placeholder]) throws(Problem) -> Template {
        var pieces: [TextPiece] = []
        var literal = ""
        var rest = Substring(text)
        var whole: (Placeholder, Bool)? = nil
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            literal += rest[..<open]
            let inside = rest[rest.index(after: open)..<close]
            let parts = inside.split(separator: ":", maxSplits: 1).map(String.init)
            guard let name = parts.first, let placeholder = Placeholder(rawValue: name), allowed.contains(placeholder) else {
                throw Problem(
                    message: "'{\(inside)}' is not a placeholder here; expected one of: \(allowed.map { "{\($0.rawValue)}" }.joined(separator: ", "))"
                )
            }
            let asString = parts.count == 2
            if asString, parts[1] != "string" { throw Problem(message: "'{\(inside)}': the only type a placeholder takes is ':string'") }
            if !literal.isEmpty { pieces.append(.literal(literal)) }
            literal = ""
            pieces.append(.placeholder(placeholder))
            if open == text.startIndex, close == text.index(before: text.endIndex) { whole = (placeholder, asString) }
            rest = rest[rest.index(after: close)...]
        }
        literal += rest
        if let (placeholder, asString) = whole { return .placeholder(placeholder, asString: asString) }
        if pieces.isEmpty { return .value(.string(text)) }
        if !literal.isEmpty { pieces.append(.literal(literal)) }
        return .text(pieces)
    }

    /// A JSON value read as a template, every string parsed.
    public static func parse(_ value: JSONValue, allowed: [Placeholder]) throws(Problem) -> Template {
        switch value {
        case .string(let text): return try parse(text, allowed: allowed)
        case .array(let items):
            var templates: [Template] = []
            for item in items { templates.append(try parse(item, allowed: allowed)) }
            return .array(templates)
        case .object(let members):
            var templates: [String: Template] = [:]
            for (key, item) in members { templates[key] = try parse(item, allowed: allowed) }
            return .object(templates)
        default: return .value(value)
        }
    }

    /// The placeholders the template uses.
    public var placeholders: [Placeholder] {
        switch self {
        case .value: []
        case .placeholder(let p, _): [p]
        case .text(let pieces): pieces.compactMap { if case .placeholder(let p) = $0 { p } else { nil } }
        case .object(let members): members.values.flatMap(\.placeholders)
        case .array(let items): items.flatMap(\.placeholders)
        }
    }

    /// Where in the JSON a placeholder stands as a whole value: the keys (and
    /// list indexes as text) leading to it. A client reads a token there.
    public func path(to placeholder: Placeholder) -> [String]? {
        switch self {
        case .placeholder(let p, _): return p == placeholder ? [] : nil
        case .object(let members):
            for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                if let rest = member.path(to: placeholder) { return [key] + rest }
            }
            return nil
        case .array(let items):
            for (index, item) in items.enumerated() {
                if let rest = item.path(to: placeholder) { return [String(index)] + rest }
            }
            return nil
        default: return nil
        }
    }

    /// The template with each placeholder's value in place. A member that is
    /// a placeholder without a value (null) is left out, as backends leave out
    /// a refresh token they did not rotate.
    public func render(_ values: (Placeholder) -> JSONValue) -> JSONValue {
        switch self {
        case .value(let value): value
        case .placeholder(let p, let asString): asString ? .string(values(p).text) : values(p)
        case .text(let pieces):
            .string(
                pieces.map { piece in
                    switch piece {
                    case .literal(let text): text
                    case .placeholder(let p): values(p).text
                    }
                }.joined())
        case .object(let members):
            .object(
                members.compactMapValues { member in
                    let value = member.render(values)
                    if case .placeholder = member, value == .null { return nil }
                    return value
                })
        case .array(let items): .array(items.map { $0.render(values) })
        }
    }

    /// The template as the file wrote it: placeholders back in their strings.
    public var written: JSONValue {
        switch self {
        case .value(let value): value
        case .placeholder(let p, let asString): .string("{\(p.rawValue)\(asString ? ":string" : "")}")
        case .text(let pieces):
            .string(
                pieces.map { piece in
                    switch piece {
                    case .literal(let text): text
                    case .placeholder(let p): "{\(p.rawValue)}"
                    }
                }.joined())
        case .object(let members): .object(members.mapValues(\.written))
        case .array(let items): .array(items.map(\.written))
        }
    }

    public init(from decoder: any Decoder) throws {
        let value = try JSONValue(from: decoder)
        do {
            self = try Self.parse(value, allowed: Placeholder.allCases)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    public func encode(to encoder: any Encoder) throws { try written.encode(to: encoder) }
}

extension JSONValue {
    /// How the value reads inside text (a header, or a string with placeholders).
    public var text: String {
        switch self {
        case .string(let s): s
        case .integer(let i): String(i)
        case .number(let d): String(d)
        case .boolean(let b): String(b)
        case .null, .object, .array: ""
        }
    }
}

extension DialectDescription {
    /// The answer an expired access token gets: by its own key, else its group's.
    public var expiredAnswer: DeclaredError? { errors.answers["access_token_expired"] ?? errors.answers["access_refused"] }

    /// Whether a client must read the code to know its token expired: another
    /// refusal of an access token (revoked, forged, missing) shares the
    /// expired answer's status but not its code, as envelope's 40101 does.
    public var signalsExpiryByCode: Bool {
        guard let expired = expiredAnswer else { return false }
        let others = ["access_token_revoked", "access_token_bad_signature", "access_token_malformed", "access_token_missing"]
        return others.contains { key in
            guard let other = errors.answers[key] ?? errors.answers["access_refused"] else { return false }
            return other.status == expired.status && other.code != expired.code
        }
    }

    /// Where an error answer says its code (`{code}` in `errors.body`), as keys.
    public var codePath: [String]? { errors.body.path(to: .code) }
}

extension JSONValue {
    /// An object of string fields whose dotted names nest (`credentials.login`):
    /// a dialect's request body as a client sends it.
    public static func nested(_ fields: [(String, String)]) -> JSONValue {
        var root: [String: JSONValue] = [:]
        for (name, value) in fields { insert(value, at: name.split(separator: ".").map(String.init)[...], into: &root) }
        return .object(root)
    }

    private static func insert(_ value: String, at path: ArraySlice<String>, into members: inout [String: JSONValue]) {
        guard let first = path.first else { return }
        guard path.count > 1 else {
            members[first] = .string(value)
            return
        }
        var nested: [String: JSONValue] = [:]
        if case .object(let existing)? = members[first] { nested = existing }
        insert(value, at: path.dropFirst(), into: &nested)
        members[first] = .object(nested)
    }

    /// The value at `path`: object keys, and list indexes written as text
    /// (`Template.path(to:)` gives such paths).
    public func value(at path: [String]) -> JSONValue? {
        var value = self
        for key in path {
            switch value {
            case .object(let members):
                guard let member = members[key] else { return nil }
                value = member
            case .array(let items):
                guard let index = Int(key), items.indices.contains(index) else { return nil }
                value = items[index]
            default: return nil
            }
        }
        return value
    }
}
