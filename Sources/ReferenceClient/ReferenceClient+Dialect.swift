import DriverProtocol
import Foundation
import NIOHTTP1

/// A declared dialect (docs/dialects.md), driven from its description as
/// `hello` brings it: the same file the server serves, so any dialect a team
/// describes can be run through the whole suite with this client.
extension ReferenceClient {
    /// The dialect's sign-in request for `username` and `password`.
    func declaredSignIn(_ dialect: DialectDescription, username: String, password: String) async throws -> Answer {
        let signIn = dialect.signIn
        let client = dialect.clientID.map { [($0, clientID)] } ?? []
        let fields = [(signIn.username, username), (signIn.password, password)] + client + signIn.match.body.sorted { $0.key < $1.key }
        let (headers, body) = Self.encode(fields, signIn.encoding)
        return try await send(
            signIn.method, Self.target(signIn.path, signIn.match), headers: headers + signIn.match.headers.sorted { $0.key < $1.key }, body: body)
    }

    /// The dialect's refresh request: each token where the file says it travels.
    func declaredRefresh(_ dialect: DialectDescription, access: String?, refresh: String) async throws -> Answer {
        let endpoint = dialect.refresh
        let client = dialect.clientID.map { [(DialectDescription.TokenLocation.field($0), clientID)] } ?? []
        let places = [(endpoint.refreshToken, refresh), (endpoint.accessToken, access ?? ""), (endpoint.accessTokenCopy, access ?? "")] + client
        return try await declaredRequest(endpoint.method, endpoint.path, endpoint.match, endpoint.encoding, places)
    }

    /// The dialect's sign-out request, with the token that names the login.
    func declaredSignOut(_ signOut: DialectDescription.SignOut, access: String?, refresh: String?) async throws -> Answer {
        let places = [(signOut.refreshToken, refresh ?? ""), (signOut.accessToken, access ?? "")]
        return try await declaredRequest(signOut.method, signOut.path, signOut.match, signOut.encoding, places)
    }

    /// A request to one of the dialect's endpoints: what its `match` asks
    /// for, and each token where the file says it travels.
    private func declaredRequest(
        _ method: String, _ path: String, _ match: DialectDescription.Match, _ encoding: DialectDescription.BodyEncoding,
        _ places: [(DialectDescription.TokenLocation?, String)]
    ) async throws -> Answer {
        var fields: [(String, String)] = match.body.sorted { $0.key < $1.key }
        var headers: [(String, String)] = match.headers.sorted { $0.key < $1.key }
        var cookies: [String] = []
        var query: [(String, String)] = []
        for (location, token) in places {
            switch location {
            case .field(let name)?: fields.append((name, token))
            case .header(let name, let scheme)?: headers.append((name, scheme.map { "\($0) \(token)" } ?? token))
            case .cookie(let name)?: cookies.append("\(name)=\(token)")
            case .query(let name)?: query.append((name, token))
            case nil: break
            }
        }
        if !cookies.isEmpty { headers.append(("Cookie", cookies.joined(separator: "; "))) }
        var body: String? = nil
        if !fields.isEmpty {
            let (typeHeader, encoded) = Self.encode(fields, encoding)
            headers += typeHeader
            body = encoded
        }
        return try await send(method, Self.target(path, match, tokens: query), headers: headers, body: body)
    }

    /// The path with the query parameters the endpoint's `match` asks for, and any tokens that travel there.
    static func target(_ path: String, _ match: DialectDescription.Match, tokens: [(String, String)] = []) -> String {
        let parameters = match.query.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } + tokens
        return parameters.isEmpty ? path : path + "?" + form(parameters)
    }

    /// A body of `fields` in the dialect's encoding; dotted names nest in JSON.
    static func encode(_ fields: [(String, String)], _ encoding: DialectDescription.BodyEncoding) -> (headers: [(String, String)], body: String) {
        switch encoding {
        case .form:
            return ([("Content-Type", "application/x-www-form-urlencoded")], form(fields))
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let data = (try? encoder.encode(JSONValue.nested(fields))) ?? Data("{}".utf8)
            return ([("Content-Type", "application/json")], String(decoding: data, as: UTF8.self))
        }
    }

    /// Token fields from a sign-in or refresh answer, in the declared dialect or the built-in ones.
    func tokens(_ answer: Answer) -> (access: String?, refresh: String?) {
        guard let dialect else { return Self.tokens(answer) }
        let body = answer.jsonValue
        let header = { (name: String) in answer.headers.first(name: name) }
        return (dialect.answerText(.accessToken, body: body, header: header), dialect.answerText(.refreshToken, body: body, header: header))
    }

    /// The lifetime an answer announces, in seconds: a number, or a number written as a string.
    func lifetime(_ answer: Answer) -> Double? {
        guard let dialect else { return Self.lifetime(answer) }
        return dialect.answerSeconds(.expiresIn, body: answer.jsonValue) { answer.headers.first(name: $0) }
    }

    /// The dialect's signal that the access token expired: the status of its
    /// expired answer, and its code where the dialect tells other refusals
    /// apart by code (docs/dialects.md).
    static func isExpirySignal(_ answer: Answer, dialect: DialectDescription) -> Bool {
        guard let expired = dialect.expiredAnswer else { return answer.status == 401 }
        guard answer.status == expired.status else { return false }
        // A 2xx is a success unless its code says otherwise.
        let byCode = dialect.signalsExpiryByCode || (200..<300).contains(expired.status)
        guard byCode, let path = dialect.codePath else { return true }
        return answer.jsonValue?.value(at: path) == expired.code
    }

    /// The key of the dialect's error answer a 2xx answer is (a backend that
    /// answers errors with HTTP 200 and a code in the body); nil for a success.
    func errorIn2xx(_ answer: Answer) -> String? {
        guard let dialect, (200..<300).contains(answer.status) else { return nil }
        return dialect.errorKey(status: answer.status, body: answer.jsonValue)
    }

    /// A 2xx answer that is none of the dialect's error answers.
    func succeeded(_ answer: Answer) -> Bool { (200..<300).contains(answer.status) && errorIn2xx(answer) == nil }
}
