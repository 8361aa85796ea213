import JWTKit
public import AuthmockCore
import AuthmockModel
public import DriverProtocol
import Foundation
public import HTTPTypes
public import Hummingbird
public import NIOCore

/// A dialect file served: sign-in and refresh where the file puts them, tokens
/// read from where it says they travel, answers in its shapes. Everything else
/// (resources, `/graphql`, health, the journal, faults, the control API) is
/// the same as for every built-in dialect. Compiled once at start: each
/// answer's row and headers are ready before the first request.
public struct DeclaredDialect: Dialect {
    public let description: DialectDescription
    public var name: String { description.name }
    public var summary: String { description.summary }
    /// The row, headers, fixed detail and own body of each declared answer, by key or group.
    private let answers: [String: (row: ErrorRow, headers: HTTPFields, detail: String?, body: Template?)]
    /// `refresh_failure_status`: the status of every refused refresh, when set.
    private let refreshFailureStatus: Int?
    /// The file's `resources` template, compiled: a resource's own answer is
    /// written into its `{data}` hole as it was encoded.
    private let resourceWrapper: CompiledTemplate?
    /// A code's value as the file wrote it (a number stays a number).
    private let codeValues: [String: JSONValue]
    private let usesUser: Bool
    private let signIn: Endpoint
    private let refresh: Endpoint
    /// The sign-in, refresh and sign-out endpoints the file declares (no
    /// refresh endpoint when the refresh token rides on resource requests).
    private let endpoints: [Endpoint]
    /// Set when the refresh rides on resource requests (`refresh.via: resources`).
    private let resourceRefresh: ResourceRefresh?
    /// Some error answer has a 2xx status (a backend that says errors with
    /// HTTP 200 and a code): a proxy reads such a backend's API answers.
    let answersErrorsIn2xx: Bool
    /// The success answers of sign-in and refresh, compiled once.
    private let signInAnswer: SuccessAnswer
    private let refreshAnswer: SuccessAnswer

    /// A success answer: its header names read and its body compiled at start.
    struct SuccessAnswer: Sendable {
        var status: HTTPResponse.Status
        var headers: [(name: HTTPField.Name, value: Template)]
        var body: Template
        var compiled: CompiledTemplate

        init(_ template: DialectDescription.AnswerTemplate) {
            status = .init(code: template.status)
            headers = template.headers.sorted { $0.key < $1.key }.compactMap { name, value in HTTPField.Name(name).map { ($0, value) } }
            body = template.body
            compiled = CompiledTemplate(template.body)
        }
    }

    /// A sign-in or refresh endpoint, its method and header names read once.
    struct Endpoint: Sendable {
        var kind: RouteKind
        var method: HTTPRequest.Method
        var path: String
        var encoding: DialectDescription.BodyEncoding
        var alsoAccepts: DialectDescription.BodyEncoding?
        var match: DialectDescription.Match
        var matchHeaders: [(name: HTTPField.Name, value: String)]

        init(
            kind: RouteKind, method: String, path: String, encoding: DialectDescription.BodyEncoding,
            alsoAccepts: DialectDescription.BodyEncoding? = nil, match: DialectDescription.Match
        ) {
            self.kind = kind
            self.method = HTTPRequest.Method(method) ?? .post
            self.path = path
            self.encoding = encoding
            self.alsoAccepts = alsoAccepts
            self.match = match
            matchHeaders = match.headers.sorted { $0.key < $1.key }.compactMap { name, value in HTTPField.Name(name).map { ($0, value) } }
        }

        /// The encoding a request's body is read in: `also_accepts` when its
        /// `Content-Type` names that one, else the endpoint's own.
        func encoding(of headers: HTTPFields) -> DialectDescription.BodyEncoding {
            guard let alsoAccepts, let type = Self.mediaType(headers) else { return encoding }
            return Self.encoding(named: type) == alsoAccepts ? alsoAccepts : encoding
        }

        /// Whether this endpoint reads a body of `type` (its `encoding` or `also_accepts`).
        func reads(_ type: String) -> Bool {
            guard let named = Self.encoding(named: type) else { return false }
            return named == encoding || named == alsoAccepts
        }

        /// `Content-Type` without its parameters, lowercased; nil when absent.
        static func mediaType(_ headers: HTTPFields) -> String? {
            headers[.contentType]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        }

        static func encoding(named type: String) -> DialectDescription.BodyEncoding? {
            switch type {
            case "application/x-www-form-urlencoded": .form
            case "application/json": .json
            default: nil
            }
        }

        /// Whether a request on this endpoint's method and path carries what its `match` asks for.
        func selects(query: String?, headers: HTTPFields, body: RequestBody) -> Bool {
            if !match.query.isEmpty {
                guard let form = try? FormBody(query ?? ""), match.query.allSatisfy({ form[$0.key] == $0.value }) else { return false }
            }
            guard matchHeaders.allSatisfy({ headers[$0.name] == $0.value }) else { return false }
            return match.body.allSatisfy { DeclaredDialect.field($0.key, in: body) == $0.value }
        }
    }

    /// The loader has checked every method and header name; one that is not
    /// valid here would be a bug there, and is dropped rather than trapped on.
    public init(_ description: DialectDescription, options: DialectOptions = DialectOptions()) {
        self.description = description
        refreshFailureStatus = options.refreshFailureStatus
        let signIn = description.signIn
        self.signIn = Endpoint(
            kind: .login, method: signIn.method, path: signIn.path, encoding: signIn.encoding, alsoAccepts: signIn.alsoAccepts, match: signIn.match)
        let refresh = description.refresh
        self.refresh = Endpoint(
            kind: .refresh, method: refresh.method, path: refresh.path, encoding: refresh.encoding, alsoAccepts: refresh.alsoAccepts,
            match: refresh.match)
        let signOut = description.signOut.map {
            Endpoint(kind: .revoke, method: $0.method, path: $0.path, encoding: $0.encoding, match: $0.match)
        }
        endpoints = (refresh.onResources ? [self.signIn] : [self.signIn, self.refresh]) + (signOut.map { [$0] } ?? [])
        resourceRefresh = ResourceRefresh(refresh, options: options)
        answersErrorsIn2xx = description.errors.answers.values.contains { (200..<300).contains($0.status) }
        signInAnswer = SuccessAnswer(description.tokens)
        refreshAnswer = SuccessAnswer(refresh.tokens ?? description.tokens)
        var answers: [String: (row: ErrorRow, headers: HTTPFields, detail: String?, body: Template?)] = [:]
        var codeValues: [String: JSONValue] = [:]
        let docs = Dictionary(Situation.answerKeys.map { ($0.key, $0.doc) }, uniquingKeysWith: { first, _ in first })
        for (key, declared) in description.errors.answers {
            let row = declared.row(profile: description.name, when: docs[key] ?? key)
            var headers = HTTPFields()
            for (name, value) in declared.headers {
                guard let name = HTTPField.Name(name) else { continue }
                headers[name] =
                    value.render { placeholder in
                        switch placeholder {
                        case .code: declared.code
                        case .message: .string(declared.message)
                        case .status: .integer(declared.status)
                        default: .null
                        }
                    }.text
            }
            answers[key] = (row, headers, declared.detail, declared.body)
            if codeValues[row.code] == nil { codeValues[row.code] = declared.code }
        }
        self.answers = answers
        self.codeValues = codeValues
        let templates = [description.tokens] + (description.refresh.tokens.map { [$0] } ?? [])
        usesUser = templates.contains { $0.body.placeholders.contains(.user) || $0.headers.values.contains { $0.placeholders.contains(.user) } }
        resourceWrapper = description.resources.map(CompiledTemplate.init)
    }

    public func addRoutes(to routes: ClientRoutes, mock: Authmock) {
        let fields = (description.signIn.username, description.signIn.password)
        // One route per method and path: sign-in and refresh may share one,
        // told apart by their `match` when the request was classified.
        var served: [(method: HTTPRequest.Method, path: String)] = []
        for endpoint in endpoints where !served.contains(where: { $0 == (endpoint.method, endpoint.path) }) {
            served.append((endpoint.method, endpoint.path))
            routes.issuing(endpoint.method, endpoint.path) { request, context in
                switch context.route.kind {
                case .login:
                    switch try await DialectRequests.login(context: context, mock: mock, fields: fields, clientField: description.clientID) {
                    case .issued(let issued): return .issued(issued, try await tokensAnswer(issued, refresh: false, mock: mock))
                    case .refused(let situation): return .plain(fail(situation, context: context))
                    }
                case .refresh:
                    switch try await refresh(request, context: context, mock: mock) {
                    case .success(let (issued, presented)):
                        let kept = description.refresh.unrotatedRefreshToken == .repeated ? presented : nil
                        return .issued(issued, try await tokensAnswer(issued, refresh: true, keptRefreshToken: kept, mock: mock))
                    case .failure(let situation): return .plain(fail(situation, context: context))
                    }
                case .revoke:
                    return .plain(try await signOut(request, context: context, mock: mock))
                default:
                    // The path and method of an endpoint, without what its `match` asks for.
                    return .plain(fail(.requestUnmatched(method: "\(request.method)", path: endpoint.path), context: context))
                }
            }
        }
        if let jwks = jwksPath { OpenIDRoutes.addJWKS(at: jwks, to: routes, mock: mock) }
        // The endpoints' paths with another method: the dialect's `method_not_allowed`.
        for path in Set(served.map(\.path)) {
            for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete] where !served.contains(where: { $0 == (method, path) }) {
                routes.on(path, method: method) { request, context in
                    fail(.methodNotAllowed(method: "\(request.method)", path: path), context: context)
                }
            }
        }
    }

    /// The sign-out the file describes: the login the token names is
    /// revoked, every token of it. An access token must be valid (the
    /// backend authenticates the request with it: the dialect's refusal
    /// otherwise); a refresh token the server does not know is answered as
    /// a success, as RFC 7009 asks (nothing is left to revoke), unless the
    /// file says the backend refuses it (`refuses_dead_token`).
    private func signOut(_ request: Request, context: AuthmockRequestContext, mock: Authmock) async throws -> Response {
        guard let signOut = description.signOut else { return fail(.internalError, context: context) }
        if let location = signOut.refreshToken {
            switch Self.token(at: location, request: request, context: context) {
            case .failure(let situation): return fail(situation, context: context)
            case .success(let token):
                if signOut.refusesDeadToken {
                    guard let info = try await mock.authority.inspectRefreshToken(token) else {
                        return fail(.refreshToken(.unknown), context: context)
                    }
                    if let failure = info.failure { return fail(.refreshToken(failure), context: context) }
                }
                try await mock.authority.revoke(token: token)
            }
        } else if let location = signOut.accessToken {
            let token: String
            switch Self.token(at: location, request: request, context: context) {
            case .failure(.body(.missing)): return fail(.noAccessToken(notBearer: false), context: context)
            case .failure(let situation): return fail(situation, context: context)
            case .success(let value): token = value
            }
            switch try await mock.authority.verifyAccessToken(token) {
            case .valid(let grant): _ = try await mock.authority.revoke(TokenSelector(family: grant.claims.sid))
            case .invalid(let failure, _): return fail(.accessToken(failure), context: context)
            }
        }
        let body = signOut.body.map { JSONResponse.bytes($0.render { _ in .null }) } ?? ByteBuffer()
        var headers: HTTPFields = [.cacheControl: "no-store"]
        if signOut.body != nil { headers[.contentType] = "application/json" }
        for (name, value) in signOut.headers { if let name = HTTPField.Name(name) { headers[name] = value.render { _ in .null }.text } }
        return Response(status: .init(code: signOut.status), headers: headers, body: .init(byteBuffer: body))
    }

    /// The refresh the file describes: the refresh token from where it
    /// travels, and the access token beside it when the file asks for one
    /// (headers and cookies read before the body, as such backends do).
    /// Succeeds with the tokens issued and the refresh token presented.
    private func refresh(
        _ request: Request, context: AuthmockRequestContext, mock: Authmock
    ) async throws -> Result<(IssuedTokens, String), Situation> {
        let refresh = description.refresh
        // The client first: a backend that names its clients checks it before the token.
        var clientID: String? = nil
        if let field = description.clientID {
            switch DialectRequests.client(named: field, context: context, mock: mock) {
            case .failure(let situation): return .failure(situation)
            case .success(let client): clientID = client.id
            }
        }
        let accessPlaces = [refresh.accessTokenCopy, refresh.accessToken].compactMap { $0 }.sorted { !$0.isBodyField && $1.isBodyField }
        var copies: [String] = []
        for location in accessPlaces {
            switch Self.token(at: location, request: request, context: context) {
            case .failure(.body(.missing)) where !location.isBodyField: return .failure(.bearerMissing)
            case .failure(let situation): return .failure(situation)
            case .success(let value): copies.append(value)
            }
        }
        let token: String
        switch Self.token(at: refresh.refreshToken, request: request, context: context) {
        case .failure(let situation): return .failure(situation)
        case .success(let value): token = value
        }
        // Compiled per refresh: a `Regex` is not Sendable, and a refresh is rare beside the cost.
        if let pattern = description.refresh.refreshTokenPattern, let shape = try? Regex(pattern), (try? shape.wholeMatch(in: token)) == nil {
            return .failure(.refreshTokenMalformed)
        }
        if let access = copies.first {
            guard copies.allSatisfy({ $0 == access }) else { return .failure(.accessTokenMismatch(.bearerDiffers)) }
            guard let claims = await mock.authority.signedClaims(access) else { return .failure(.accessTokenMismatch(.notOurs)) }
            guard let info = try await mock.authority.inspectRefreshToken(token) else {
                return .failure(await mock.authority.signedClaims(token) == nil ? .refreshToken(.unknown) : .accessTokenAsRefreshToken)
            }
            guard info.familyID == claims.sid else { return .failure(.accessTokenMismatch(.otherLogin)) }
        } else if await mock.authority.signedClaims(token) != nil {
            return .failure(.accessTokenAsRefreshToken)
        }
        return try await mock.authority.refresh(token, clientID: clientID, arrivedAt: context.arrivedAt).map { ($0, token) }.mapError {
            .refreshToken($0)
        }
    }

    /// A token from where the file says it travels; absent or empty is a missing field.
    static func token(at location: DialectDescription.TokenLocation, request: Request, context: AuthmockRequestContext) -> Result<String, Situation> {
        switch location {
        case .field(let name):
            return DialectRequests.fields(context, [name]).mapError { .body($0) }.flatMap { fields in
                fields[name].map { .success($0) } ?? .failure(.body(.missing(name)))
            }
        case .header, .cookie, .query:
            guard let value = Self.tokenBesideBody(at: location, headers: request.headers, query: request.uri.query) else {
                return .failure(.body(.missing(location.label)))
            }
            return .success(value)
        }
    }

    /// A token in a header (after its scheme), a cookie or the query, read without the body.
    static func tokenBesideBody(at location: DialectDescription.TokenLocation, headers: HTTPFields, query: String?) -> String? {
        switch location {
        case .field: return nil
        case .query(let name):
            guard let value = (try? FormBody(query ?? ""))?[name], !value.isEmpty else { return nil }
            return value
        case .header(let name, let scheme) where name.lowercased() == "authorization" && scheme?.lowercased() == "bearer":
            // Read as resources read it (`Bearer` in any case, spaces or tabs after it).
            guard case .bearer(let value) = PresentedCredential(headers), !value.isEmpty else { return nil }
            return value
        case .header(let name, let scheme):
            guard let name = HTTPField.Name(name), var value = headers.value(of: name)?.trimmedSpaces, !value.isEmpty else { return nil }
            if let scheme {
                guard let rest = value.afterScheme(scheme) else { return nil }
                value = rest
            }
            return value.isEmpty ? nil : String(value)
        case .cookie(let name):
            for line in headers[values: .cookie] {
                for pair in line.split(separator: ";") {
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    if parts.count == 2, parts[0].trimmedSpaces == name {
                        let value = parts[1].trimmedSpaces
                        return value.isEmpty ? nil : String(value)
                    }
                }
            }
            return nil
        }
    }

    /// A sign-in's or refresh's success answer for tokens just issued;
    /// `keptRefreshToken` is said as `{refresh_token}` when none was issued
    /// (rotation off).
    private func tokensAnswer(_ issued: IssuedTokens, refresh: Bool, keptRefreshToken: String? = nil, mock: Authmock) async throws -> Response {
        let answer = refresh ? refreshAnswer : signInAnswer
        let user: String? = usesUser ? await mock.authority.signedClaims(issued.accessToken)?.sub.value : nil
        let expiresAt = Int(mock.clock.now().timeIntervalSince1970) + issued.expiresIn
        let refreshTTL = mock.options.tokens.refreshTTL
        let values: (Placeholder) -> JSONValue = { placeholder in
            switch placeholder {
            case .accessToken: .string(issued.accessToken)
            case .refreshToken: (issued.refreshToken ?? keptRefreshToken).map(JSONValue.string) ?? .null
            case .expiresIn: .integer(issued.expiresIn)
            case .expiresAt: .integer(expiresAt)
            case .refreshExpiresIn: .integer(refreshTTL)
            case .tokenType: .string("Bearer")
            case .user: user.map(JSONValue.string) ?? .null
            case .idToken: issued.idToken.map(JSONValue.string) ?? .null
            case .code, .message, .status, .data, .baseURL, .issuer: .null
            }
        }
        var headers = HTTPFields()
        for (name, value) in answer.headers { headers[name] = value.render(values).text }
        if let body = answer.compiled.render(values) { return JSONResponse.response(body, status: answer.status, headers: headers) }
        return JSONResponse.encode(answer.body.render(values), status: answer.status, headers: headers)
    }

    public func classify(method: HTTPRequest.Method, path: String, query: String?, headers: HTTPFields, body: ByteBuffer) -> RouteClassification {
        var onEndpointPath = false
        for endpoint in endpoints where method == endpoint.method && path == endpoint.path {
            onEndpointPath = true
            let parsed =
                refusedMediaType(headers, body: body, endpoint: endpoint).map { RequestBody.json(.failure($0)) }
                ?? Self.parse(body, endpoint.encoding(of: headers))
            guard endpoint.selects(query: query, headers: headers, body: parsed) else { continue }
            guard endpoint.kind != .login else { return .init(kind: .login, body: parsed) }
            guard let location = endpoint.kind == .refresh ? description.refresh.refreshToken : description.signOut?.refreshToken else {
                return .init(kind: endpoint.kind, body: parsed)
            }
            let token: String? =
                switch location {
                case .field(let name): Self.field(name, in: parsed)
                default: Self.tokenBesideBody(at: location, headers: headers, query: query)
                }
            return .init(kind: endpoint.kind, refreshToken: token, body: parsed)
        }
        if onEndpointPath { return .init(kind: .other) }
        if method == .get || method == .head, path == jwksPath || description.documents?[path] != nil { return .init(kind: .metadata) }
        let route = RouteClassification.shared(path: path)
        if route.kind == .resource, let token = resourceRefresh?.presentedRefreshToken(headers) {
            return .init(kind: .refresh, refreshToken: token)
        }
        return route
    }

    /// The JWKS under the issuer's path (`jwt.issuer_path`), where clients of such a backend fetch it.
    var jwksPath: String? {
        description.jwt?.servedJWKSPath
    }

    public var endpointPaths: [String] {
        endpoints.map { $0.path.count > 1 && $0.path.hasSuffix("/") ? String($0.path.dropLast()) : $0.path }
    }

    /// The access token an API answer renews in its header, for a dialect
    /// that refreshes on resources; nil for any other.
    func renewedAccessToken(_ headers: HTTPFields) -> String? { resourceRefresh?.renewedToken(headers) }

    /// A browser interceptor must read a renewed access token.
    public var exposedResponseHeaders: [String] { resourceRefresh.map { [$0.renewed.rawName] } ?? [] }

    public func document(at path: String, mock: Authmock) -> Response? {
        guard let document = description.documents?[path] else { return nil }
        let values: (Placeholder) -> JSONValue = { placeholder in
            switch placeholder {
            case .baseURL: .string(mock.baseURL)
            case .issuer: .string(mock.authority.issuer)
            default: .null
            }
        }
        return JSONResponse.encode(document.render(values), status: .ok, headers: [.cacheControl: "public, max-age=300"])
    }

    public func authorizeResource(
        _ request: Request, context: AuthmockRequestContext, mock: Authmock
    ) async throws -> Result<ResourceAccess, Situation> {
        guard let resourceRefresh else {
            // A backend that compares the scheme's bytes takes `bearer` for no credential at all.
            if description.bearerScheme == .exact, let raw = request.headers[.authorization],
                raw.split(separator: " ", maxSplits: 1).first.map({ $0 != "Bearer" && $0.lowercased() == "bearer" }) == true
            {
                return .failure(.noAccessToken(notBearer: true))
            }
            return try await Resources.authorizeBearer(request, context: context, mock: mock).map { ResourceAccess(grant: $0) }
        }
        return try await resourceRefresh.authorize(request, context: context, mock: mock)
    }

    public func finishResource(_ response: Response, access: ResourceAccess, mock: Authmock) async throws -> ClientAnswer {
        guard let resourceRefresh else { return .init(response: response, issued: access.issued) }
        return try await resourceRefresh.finish(response, access: access, mock: mock)
    }

    /// A string field of a body parsed on arrival (dotted names reach into JSON).
    static func field(_ name: String, in body: RequestBody) -> String? {
        switch body {
        case .json(.success(let fields)): fields[name]
        case .form(.success(let form)): form[name]
        default: nil
        }
    }

    /// Under `other_content_types: refuse`, a body in a type the endpoint
    /// does not read (none counts, when there is a body): every field read
    /// from it then fails with this problem, answered `unsupported_media_type`.
    private func refusedMediaType(_ headers: HTTPFields, body: ByteBuffer, endpoint: Endpoint) -> JSONFields.Problem? {
        guard description.otherContentTypes == .refuse else { return nil }
        guard let type = Endpoint.mediaType(headers) else { return body.readableBytes > 0 ? .unsupportedMediaType("none") : nil }
        return endpoint.reads(type) ? nil : .unsupportedMediaType(type)
    }

    private static func parse(_ body: ByteBuffer, _ encoding: DialectDescription.BodyEncoding) -> RequestBody {
        switch encoding {
        case .json: .json(body)
        case .form: .form(body)
        }
    }

    // MARK: Answers

    /// The file's answer to a situation: its own key, else its group, else
    /// (request-level situations only) the shared row in the file's shape.
    public func answer(to situation: Situation) -> ErrorAnswer {
        let detail = situation.detail
        // A file's empty detail says nothing after the message.
        func said(_ fixed: String?) -> String? { fixed.map { $0.isEmpty ? nil : $0 } ?? detail }
        // A malformed refresh token is, to a file that does not tell the two apart, one the server never issued.
        let narrower = situation == .refreshTokenMalformed ? answers["refresh_token_unknown"] : nil
        if let declared = answers[situation.key] ?? narrower ?? situation.group.flatMap({ answers[$0] }) {
            let status = situation.group == "refresh_refused" ? refreshFailureStatus : nil
            return ErrorAnswer(declared.row, detail: said(declared.detail), headers: declared.headers, status: status, body: declared.body)
        }
        // Situations a file need not name, answered as one it does: a method
        // the endpoint does not take, or a request its `match` fits no
        // endpoint of, as an unknown route; an unknown client
        // (a file without `client_id`) or user as wrong credentials; a body in a type
        // it does not refuse as one it cannot read (only a fault's `answer`
        // meets the last two there).
        let standIn: String? =
            switch situation {
            case .methodNotAllowed, .requestUnmatched: "not_found"
            case .unknownClient, .unknownUser: "wrong_credentials"
            case .body(.unsupportedMediaType): "body_malformed"
            default: nil
            }
        if let standIn, let declared = answers[standIn] {
            return ErrorAnswer(declared.row, detail: said(declared.detail), headers: declared.headers, body: declared.body)
        }
        // The loader refuses a file that leaves a situation of a group
        // unanswered; only the request-level situations get here.
        return situation.commonAnswer
    }

    /// A resource's answer, inside the file's `resources` template when it has one.
    public func successBody<Body: Encodable>(_ body: Body) -> ByteBuffer {
        let data = JSONResponse.bytes(body)
        return resourceWrapper?.render(data, as: .data) ?? data
    }

    public func errorBody(_ answer: ErrorAnswer) -> ByteBuffer {
        let row = answer.row
        var message = row.message
        if let detail = answer.detail { message += ": \(detail)" }
        let code = codeValues[row.code] ?? .string(row.code)
        let body = (answer.body ?? description.errors.body).render { placeholder in
            switch placeholder {
            case .code: code
            case .message: .string(message)
            case .status: .integer(row.status)
            default: .null
            }
        }
        return JSONResponse.bytes(body)
    }

    public func startupHints(baseURL: String, directory: Directory) -> [String] {
        let user = directory.users.first ?? Directory.defaultUser
        let names = description.signIn
        // A backend that names its app client is told the first configured one.
        let client = description.clientID.map { [($0, (directory.clients.first ?? Directory.defaultClient).id)] } ?? []
        var refreshFields: [(String, String)] = client
        var refreshHeaders: [String] = []
        var refreshQuery: [(String, String)] = []
        let places = [
            (description.refresh.refreshToken, "$REFRESH_TOKEN"), (description.refresh.accessToken, "$ACCESS_TOKEN"),
            (description.refresh.accessTokenCopy, "$ACCESS_TOKEN"),
        ]
        for (location, variable) in places {
            switch location {
            case .field(let name)?: refreshFields.append((name, variable))
            case .header(let name, let scheme)?: refreshHeaders.append("-H \"\(name): \(scheme.map { "\($0) " } ?? "")\(variable)\"")
            case .cookie(let name)?: refreshHeaders.append("-H \"Cookie: \(name)=\(variable)\"")
            case .query(let name)?: refreshQuery.append((name, variable))
            case nil: break
            }
        }
        let signingIn = [
            "Sign in:",
            "  "
                + Self.curl(
                    signIn, fields: [(names.username, user.username), (names.password, user.password)] + client, headers: [], baseURL: baseURL),
            "Call the API:",
            "  curl -s -H \"Authorization: Bearer $ACCESS_TOKEN\" \(baseURL)/api/me",
        ]
        if let resourceRefresh {
            return signingIn + [
                "Refresh (after a 401, repeat the request with the refresh token; the new access token comes back in \(resourceRefresh.renewed)):",
                "  curl -si \(refreshHeaders.joined(separator: " ")) \(baseURL)/api/me",
            ]
        }
        return signingIn + [
            "Refresh:",
            "  " + Self.curl(refresh, fields: refreshFields, headers: refreshHeaders, query: refreshQuery, baseURL: baseURL),
        ]
    }

    /// A curl line for an endpoint, its fields nested as dotted names say.
    private static func curl(
        _ endpoint: Endpoint, fields: [(String, String)], headers: [String], query: [(String, String)] = [], baseURL: String
    ) -> String {
        // What its `match` asks for comes first: without it the request is not this endpoint's.
        let fields = endpoint.match.body.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } + fields
        var parts = ["curl -s"]
        if endpoint.method != .post || fields.isEmpty { parts.append("-X \(endpoint.method.rawValue)") }
        parts += endpoint.matchHeaders.map { "-H '\($0.name): \($0.value)'" } + headers
        switch endpoint.encoding {
        case .form:
            parts += fields.map { "-d \($0.0)=\($0.1)" }
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let json = String(decoding: (try? encoder.encode(JSONValue.nested(fields))) ?? Data(), as: UTF8.self)
            parts.append("-H 'Content-Type: application/json'")
            parts.append("-d \"\(json.replacingOccurrences(of: "\"", with: "\\\""))\"")
        }
        // The query its `match` asks for, and any token that travels there.
        let parameters = endpoint.match.query.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } + query
        let target = baseURL + endpoint.path + (parameters.isEmpty ? "" : "?" + parameters.map { "\($0.0)=\($0.1)" }.joined(separator: "&"))
        parts.append(parameters.isEmpty ? target : "\"\(target)\"")
        return parts.joined(separator: " ")
    }
}

extension DialectDescription.DeclaredError {
    /// The documented row of this answer; `when` unless the file says its own.
    public func row(profile: String, when: String) -> ErrorRow {
        ErrorRow(profile: profile, status: status, code: code.text, message: message, when: self.when ?? when)
    }
}

extension DialectDescription.TokenLocation {
    /// Whether the token travels in the body (read after headers and cookies).
    var isBodyField: Bool {
        if case .field = self { true } else { false }
    }

    /// How a missing token's place is named in an error's detail.
    var label: String {
        switch self {
        case .field(let name): name
        case .header(let name, _): "the \(name) header"
        case .cookie(let name): "the \(name) cookie"
        case .query(let name): "the \(name) query parameter"
        }
    }
}
