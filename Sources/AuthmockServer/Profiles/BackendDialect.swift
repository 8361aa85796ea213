public import AuthmockCore
import Foundation
public import HTTPTypes
public import Hummingbird
import NIOCore

/// What the app-backend dialects (envelope, reissue, renewal,
/// header-rotation) share: JSON bodies, `POST /auth/login`, and the client
/// the tokens are issued to (these backends authenticate users, not clients).
enum BackendDialect {
    /// The named string fields of the JSON object or form body, as parsed on
    /// arrival, each present and not empty.
    static func fields(_ context: AuthmockRequestContext, _ names: [String]) -> Result<[String: String], JSONFields.Problem> {
        switch context.route.body {
        case .json(let parsed): return parsed.flatMap { $0.strings(names) }
        case .form(.failure): return .failure(.malformed)
        case .form(.success(let form)):
            var result: [String: String] = [:]
            for name in names {
                guard let value = form[name], !value.isEmpty else { return .failure(.missing(name)) }
                result[name] = value
            }
            return .success(result)
        default:
            assertionFailure("\(context.route.kind) route classified without its body")
            return .failure(.malformed)
        }
    }

    /// The client tokens of these dialects are issued to: the first configured one.
    static func client(_ mock: Authmock) -> Client {
        mock.directory.clients.first ?? Directory.defaultClient
    }

    enum LoginOutcome {
        case issued(IssuedTokens)
        /// A body problem, or wrong credentials.
        case refused(Situation)
    }

    /// `POST /auth/login {"username", "password"}` (or a declared dialect's
    /// sign-in, with its field names): a new login (family).
    static func login(
        context: AuthmockRequestContext, mock: Authmock, fields names: (username: String, password: String) = ("username", "password")
    ) async throws
        -> LoginOutcome
    {
        switch fields(context, [names.username, names.password]) {
        case .failure(let problem): return .refused(.body(problem))
        case .success(let fields):
            guard let username = fields[names.username], let password = fields[names.password],
                let user = mock.directory.authenticate(username: username, password: password)
            else {
                return .refused(.wrongCredentials)
            }
            let client = client(mock)
            return .issued(try await mock.authority.issue(subject: user.username, clientID: client.id, scope: client.defaultScopes.joined(separator: " ")))
        }
    }

    /// Classification shared by the dialects: login and resources by path,
    /// plus the profile's refresh route, whose JSON body holds `refreshToken`.
    static func classify(path: String, body: ByteBuffer, refreshPath: String?) -> RouteClassification {
        if path == "/auth/login" { return .init(kind: .login, body: .json(body)) }
        if let refreshPath, path == refreshPath {
            let parsed = JSONFields.parse(body)
            return .init(kind: .refresh, refreshToken: try? parsed.get()["refreshToken"], body: .json(parsed))
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

    /// The answers reissue, renewal and header-rotation share; a 401 from a
    /// resource carries a Bearer challenge so generic clients recognise it. A
    /// refresh token refused on a resource is header rotation's refresh.
    func plainAnswer(to situation: Situation) -> ErrorAnswer {
        let challenge: HTTPFields = [.wwwAuthenticate: #"Bearer realm="authmock""#]
        switch situation {
        case .notFound, .methodNotAllowed, .malformedFraming, .payloadTooLarge, .storeUnavailable, .internalError: return situation.commonAnswer
        case .body(.malformed): return ErrorAnswer(BackendError.malformedJSON)
        case .body(.notAnObject), .body(.wrongType): return ErrorAnswer(BackendError.invalidField, detail: situation.detail)
        case .body(.missing): return ErrorAnswer(BackendError.missingField, detail: situation.detail)
        case .wrongCredentials: return ErrorAnswer(BackendError.wrongCredentials)
        case .noAccessToken, .accessToken(.missing): return ErrorAnswer(BackendError.missingToken, headers: challenge)
        case .accessToken(.expired): return ErrorAnswer(BackendError.tokenExpired, headers: challenge)
        case .accessToken(.revoked): return ErrorAnswer(BackendError.tokenRevoked, headers: challenge)
        case .accessToken(let failure):
            return ErrorAnswer(BackendError.tokenInvalid, detail: failure.rawValue.replacingOccurrences(of: "_", with: " "), headers: challenge)
        case .refreshTokenAsAccessToken: return ErrorAnswer(BackendError.refreshAsAccess, headers: challenge)
        case .refreshToken(.expired): return ErrorAnswer(HeaderRotationError.refreshExpired, headers: challenge)
        case .refreshToken(.revoked), .refreshToken(.reused): return ErrorAnswer(HeaderRotationError.refreshRevoked, headers: challenge)
        case .refreshToken: return ErrorAnswer(HeaderRotationError.refreshUnknown, headers: challenge)
        // Only a refresh endpoint that takes both tokens meets these (PairedRefreshProfile).
        case .accessTokenAsRefreshToken, .accessTokenMismatch, .bearerMissing: return ErrorAnswer(HeaderRotationError.refreshUnknown, headers: challenge)
        case .insufficientScope: return ErrorAnswer(BackendError.accessDenied, detail: situation.detail)
        }
    }

    /// `POST /auth/login` in the plain dialects.
    func addLogin(to routes: ClientRoutes, mock: Authmock) {
        routes.issuing(.post, "/auth/login") { _, context in
            switch try await BackendDialect.login(context: context, mock: mock) {
            case .issued(let issued): return .issued(issued, JSONResponse.encode(BackendDialect.TokenPair(issued)))
            case .refused(let situation): return .plain(fail(situation, context: context))
            }
        }
    }
}
