import Foundation

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
    /// The server's URL and the tokens' issuer, in `documents`.
    case baseURL = "base_url"
    case issuer

    /// Those a success answer, an error answer and a resource answer can say.
    public static let success: [Placeholder] = [.accessToken, .refreshToken, .expiresIn, .expiresAt, .refreshExpiresIn, .tokenType, .user, .idToken]
    public static let error: [Placeholder] = [.code, .message, .status]
    public static let resource: [Placeholder] = [.data]
    public static let document: [Placeholder] = [.baseURL, .issuer]

    public var doc: String {
        switch self {
        case .accessToken: "the new access token"
        case .refreshToken: "the new refresh token; with rotation off there is none, and its member is left out (the client keeps its own)"
        case .expiresIn: "the access token's lifetime in seconds (a number; `{expires_in:string}` for a string)"
        case .expiresAt: "when the access token expires, seconds since 1970 on the server clock"
        case .refreshExpiresIn: "the refresh token's lifetime in seconds"
        case .tokenType: "`Bearer`"
        case .user: "the signed-in user's name"
        case .idToken: "an id token: a declared dialect issues one when its `jwt.id_token_claims` says so, else its member is left out"
        case .code: "the error's code, a string or a number as the file wrote it"
        case .message: "the error's message, with its detail after a colon"
        case .status: "the HTTP status, a number"
        case .data: "the resource's own JSON answer (`/api/me`, an echo)"
        case .baseURL: "the server's URL as clients reach it (`https://127.0.0.1:8443`)"
        case .issuer: "the tokens' `iss`: the server's URL and `jwt.issuer_path`"
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

    /// The fixed value the template holds at `path` (a success answer's
    /// `"code": 0`); nil where a placeholder or nothing stands there.
    public func literal(at path: [String]) -> JSONValue? {
        guard let first = path.first else {
            if case .value(let value) = self { return value }
            return nil
        }
        switch self {
        case .object(let members): return members[first]?.literal(at: Array(path.dropFirst()))
        case .array(let items):
            guard let index = Int(first), items.indices.contains(index) else { return nil }
            return items[index].literal(at: Array(path.dropFirst()))
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
