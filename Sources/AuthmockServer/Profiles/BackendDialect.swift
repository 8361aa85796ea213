import AuthmockCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// What the app-backend dialects (envelope, reissue, renewal,
/// header-rotation) share: JSON bodies, `POST /auth/login`, and the client
/// the tokens are issued to (these backends authenticate users, not clients).
enum BackendDialect {
    /// Why a JSON body could not be read.
    enum BodyProblem: Error, Equatable {
        case malformed
        case notAnObject
        case missing(String)
        case wrongType(String)
    }

    /// Reads the named string fields of a JSON object body; `optional` ones may be absent.
    static func fields(_ request: Request, names: [String], optional: [String] = [], limit: Int) async throws -> Result<[String: String], BodyProblem> {
        var request = request
        let buffer = try await request.collectBody(upTo: limit)
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(buffer: buffer), options: [.fragmentsAllowed]) else {
            return .failure(.malformed)
        }
        guard let object = parsed as? [String: Any] else { return .failure(.notAnObject) }
        var result: [String: String] = [:]
        for name in names + optional {
            guard let value = object[name], !(value is NSNull) else {
                if names.contains(name) { return .failure(.missing(name)) }
                continue
            }
            guard let text = value as? String else { return .failure(.wrongType(name)) }
            if text.isEmpty, names.contains(name) { return .failure(.missing(name)) }
            result[name] = text
        }
        return .success(result)
    }

    /// The client tokens of these dialects are issued to: the first configured one.
    static func client(_ mock: Authmock) -> Client {
        mock.directory.clients.first ?? Directory.defaultClient
    }

    enum LoginOutcome {
        case issued(IssuedTokens)
        case body(BodyProblem)
        case wrongCredentials
    }

    /// `POST /auth/login {"username", "password"}`: a new login (family).
    static func login(_ request: Request, context: AuthmockRequestContext, mock: Authmock) async throws -> LoginOutcome {
        switch try await fields(request, names: ["username", "password"], limit: mock.options.maxBodyBytes) {
        case .failure(let problem): return .body(problem)
        case .success(let fields):
            guard let user = mock.directory.authenticate(username: fields["username"]!, password: fields["password"]!) else {
                return .wrongCredentials
            }
            let client = client(mock)
            let issued = try await mock.authority.issue(subject: user.username, clientID: client.id, scope: client.defaultScopes.joined(separator: " "))
            context.notes.issued = issued
            return .issued(issued)
        }
    }

    /// Why a refresh that sends both tokens failed.
    enum PairedRefreshFailure: Error {
        /// The access token is not a JWT signed by this server.
        case accessNotOurs
        /// The access token belongs to another login than the refresh token.
        case accessOfAnotherLogin
        case refresh(RefreshTokenFailure)
    }

    /// The dialect's documented error for a paired-refresh failure, and a detail.
    static func error<E: ErrorCatalog>(
        for failure: PairedRefreshFailure, accessMismatch: E, expired: E, reused: E, unknown: E, revoked: E
    ) -> (E, String?) {
        switch failure {
        case .accessNotOurs: (accessMismatch, "accessToken is not signed by this server")
        case .accessOfAnotherLogin: (accessMismatch, nil)
        case .refresh(.expired): (expired, nil)
        case .refresh(.reused): (reused, nil)
        case .refresh(.unknown): (unknown, nil)
        case .refresh(.revoked), .refresh(.clientMismatch): (revoked, nil)
        }
    }

    /// Refresh for the dialects that send both tokens (reissue, renewal): the
    /// access token may be expired, but it must be ours and of the same login.
    static func refreshPair(access: String, refresh: String, mock: Authmock) async throws -> Result<IssuedTokens, PairedRefreshFailure> {
        guard let claims = await mock.authority.signedClaims(access) else { return .failure(.accessNotOurs) }
        guard let info = mock.authority.inspectRefreshToken(refresh) else { return .failure(.refresh(.unknown)) }
        guard info.familyID == claims.sid else { return .failure(.accessOfAnotherLogin) }
        return try await mock.authority.refresh(refresh, clientID: nil).mapError { .refresh($0) }
    }

    /// Classification shared by the dialects: login and resources by path,
    /// plus the profile's refresh route with the JSON field holding the token.
    static func classify(path: String, body: ByteBuffer, refreshPath: String?, refreshField: String = "refreshToken") -> RouteClassification {
        if path == "/auth/login" { return .init(kind: .login) }
        if let refreshPath, path == refreshPath {
            let object = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any]
            return .init(kind: .refresh, refreshToken: object?[refreshField] as? String)
        }
        return .shared(path: path)
    }

    /// `{"accessToken", "refreshToken", "expiresIn"}`, the answer of every
    /// backend dialect except envelope (which names the lifetime differently).
    struct TokenPair: Encodable {
        var accessToken: String
        var refreshToken: String?
        var expiresIn: Int

        init(_ issued: IssuedTokens, refreshToken: String? = nil) {
            accessToken = issued.accessToken
            self.refreshToken = issued.refreshToken ?? refreshToken
            expiresIn = issued.expiresIn
        }
    }

    static func loginHints(baseURL: String, directory: Directory) -> [String] {
        let user = directory.users.first ?? Directory.defaultUser
        return [
            "Sign in:",
            "  curl -s -H 'Content-Type: application/json' -d '{\"username\":\"\(user.username)\",\"password\":\"\(user.password)\"}' \(baseURL)/auth/login",
            "Call the API:",
            "  curl -s -H \"Authorization: Bearer $ACCESS_TOKEN\" \(baseURL)/api/me",
        ]
    }
}

/// The `{"error": code, "message": ...}` encoding and the resource errors
/// shared by reissue, renewal and header-rotation.
public protocol PlainErrorProfile: Profile {}

extension PlainErrorProfile {
    public func errorResponse(_ row: ErrorRow, detail: String?, headers: HTTPFields) -> Response {
        var message = row.message
        if let detail { message += ": \(detail)" }
        return JSONResponse.encode(["error": row.code, "message": message], status: .init(code: row.status), headers: headers)
    }

    /// Resource refusals; a 401 carries a Bearer challenge so generic clients recognise it.
    func plainRefusal(_ refusal: ResourceRefusal, context: AuthmockRequestContext) -> Response {
        let challenge: HTTPFields = [.wwwAuthenticate: #"Bearer realm="authmock""#]
        switch refusal {
        case .noBearer, .token(.missing): return fail(BackendError.missingToken, headers: challenge, context: context)
        case .token(.expired): return fail(BackendError.tokenExpired, headers: challenge, context: context)
        case .token(.revoked): return fail(BackendError.tokenRevoked, headers: challenge, context: context)
        case .token(let failure): return fail(BackendError.tokenInvalid, detail: failure.rawValue.replacingOccurrences(of: "_", with: " "), headers: challenge, context: context)
        case .refreshTokenAsAccessToken: return fail(BackendError.refreshAsAccess, headers: challenge, context: context)
        case .refresh(.expired): return fail(HeaderRotationError.refreshExpired, headers: challenge, context: context)
        case .refresh(.revoked), .refresh(.reused): return fail(HeaderRotationError.refreshRevoked, headers: challenge, context: context)
        case .refresh: return fail(HeaderRotationError.refreshUnknown, headers: challenge, context: context)
        case .insufficientScope(let scope): return fail(BackendError.accessDenied, detail: "needs \(scope)", context: context)
        }
    }

    func bodyProblem(_ problem: BackendDialect.BodyProblem, context: AuthmockRequestContext) -> Response {
        switch problem {
        case .malformed: fail(BackendError.malformedJSON, context: context)
        case .notAnObject: fail(BackendError.invalidField, detail: "the body must be a JSON object", context: context)
        case .missing(let name): fail(BackendError.missingField, detail: name, context: context)
        case .wrongType(let name): fail(BackendError.invalidField, detail: "\(name) must be a string", context: context)
        }
    }

    /// `POST /auth/login` in the plain dialects.
    func addLogin(to router: Router<AuthmockRequestContext>, mock: Authmock) {
        router.post("/auth/login") { request, context in
            switch try await BackendDialect.login(request, context: context, mock: mock) {
            case .issued(let issued): return JSONResponse.encode(BackendDialect.TokenPair(issued))
            case .body(let problem): return bodyProblem(problem, context: context)
            case .wrongCredentials: return fail(BackendError.wrongCredentials, context: context)
            }
        }
    }
}
