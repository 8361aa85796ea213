public import AuthmockCore
import DriverProtocol
public import HTTPTypes
public import Hummingbird
import NIOCore

/// The error catalog of a dialect that refreshes with both tokens.
public protocol PairedRefreshErrors: ErrorCatalog {
    static var refreshExpired: Self { get }
    static var refreshRevoked: Self { get }
    static var refreshReused: Self { get }
    static var refreshUnknown: Self { get }
    /// The access token is not ours, or of another login than the refresh token.
    static var accessMismatch: Self { get }
}

extension ReissueError: PairedRefreshErrors {}
extension RenewalError: PairedRefreshErrors {}

/// Backends that refresh by sending both tokens to one endpoint; the access
/// token may be expired but must be ours and of the same login. Two dialects
/// differ only in the configuration below:
/// - reissue: `POST /auth/reissue`; a dead refresh token answers 406, which
///   the apps built on such backends treat as "log out".
/// - renewal: `POST /auth/refresh` with the old access token as Bearer too;
///   failure is a 401 like an expired access token, so a client that
///   refreshes on any 401 recurses here.
public struct PairedRefreshProfile<Errors: PairedRefreshErrors>: PlainErrorProfile {
    public let name: String
    public let summary: String
    /// The refresh endpoint.
    let path: String
    /// Set when the old access token must come as Bearer too: the error for its absence.
    let bearerRequired: Errors?
    /// Whether the refresh answer says the new token's lifetime (`expiresIn`).
    let answersLifetime: Bool
    /// The status of every failed refresh (`refresh_failure_status`).
    let failureStatus: Int
    let refreshHint: String

    public func addRoutes(to routes: ClientRoutes, mock: Authmock) {
        addLogin(to: routes, mock: mock)
        routes.issuing(.post, path) { request, context in
            var bearer: String? = nil
            if bearerRequired != nil {
                guard case .bearer(let presented) = context.credential ?? PresentedCredential(request.headers), !presented.isEmpty else {
                    return .plain(fail(.bearerMissing, context: context))
                }
                bearer = presented
            }
            let fields: [String: String]
            switch BackendDialect.fields(context, ["accessToken", "refreshToken"]) {
            case .failure(let problem): return .plain(fail(.body(problem), context: context))
            case .success(let parsed): fields = parsed
            }
            guard let access = fields["accessToken"], let refresh = fields["refreshToken"] else {
                return .plain(fail(.body(.missing("refreshToken")), context: context))
            }
            if let bearer, bearer != access {
                return .plain(fail(.accessTokenMismatch(.bearerDiffers), context: context))
            }
            switch try await refreshPair(access: access, refresh: refresh, mock: mock) {
            case .success(let issued):
                // With rotation off the answer has no refreshToken: the client keeps its own.
                let answer = Renewed(accessToken: issued.accessToken, refreshToken: issued.refreshToken, expiresIn: answersLifetime ? issued.expiresIn : nil)
                return .issued(issued, JSONResponse.encode(answer))
            case .failure(let situation): return .plain(fail(situation, context: context))
            }
        }
    }

    struct Renewed: Encodable {
        var accessToken: String
        var refreshToken: String?
        var expiresIn: Int?
    }

    /// Refreshes with both tokens: the access token (expired or not) must be
    /// ours and of the refresh token's login.
    private func refreshPair(access: String, refresh: String, mock: Authmock) async throws -> Result<IssuedTokens, Situation> {
        guard let claims = await mock.authority.signedClaims(access) else { return .failure(.accessTokenMismatch(.notOurs)) }
        guard let info = try await mock.authority.inspectRefreshToken(refresh) else { return .failure(.refreshToken(.unknown)) }
        guard info.familyID == claims.sid else { return .failure(.accessTokenMismatch(.otherLogin)) }
        return try await mock.authority.refresh(refresh, clientID: nil).mapError { .refreshToken($0) }
    }

    /// A failed refresh answers the dialect's row at `refresh_failure_status`;
    /// everything else is the plain dialects' shared answer.
    public func answer(to situation: Situation) -> ErrorAnswer {
        let error: Errors
        var detail: String? = nil
        switch situation {
        case .refreshToken(.expired): error = .refreshExpired
        case .refreshToken(.reused): error = .refreshReused
        // Its refresh token is opaque: an access token there is simply not one it issued.
        case .refreshToken(.unknown), .accessTokenAsRefreshToken: error = .refreshUnknown
        case .refreshToken(.revoked), .refreshToken(.clientMismatch): error = .refreshRevoked
        case .accessTokenMismatch(.notOurs): (error, detail) = (.accessMismatch, "accessToken is not signed by this server")
        case .accessTokenMismatch(.otherLogin): error = .accessMismatch
        case .accessTokenMismatch(.bearerDiffers): (error, detail) = (.accessMismatch, "the Bearer token and accessToken differ")
        case .bearerMissing: error = bearerRequired ?? .accessMismatch
        default: return plainAnswer(to: situation)
        }
        return ErrorAnswer(error, detail: detail, status: failureStatus)
    }

    public func classify(method: HTTPRequest.Method, path: String, query: String?, headers: HTTPFields, body: ByteBuffer) -> RouteClassification {
        BackendDialect.classify(path: path, body: body, refreshPath: self.path)
    }

    public func startupHints(baseURL: String, directory: Directory) -> [String] {
        let bearer = bearerRequired == nil ? "" : "-H \"Authorization: Bearer $ACCESS_TOKEN\" "
        let body = "{\\\"accessToken\\\":\\\"$ACCESS_TOKEN\\\",\\\"refreshToken\\\":\\\"$REFRESH_TOKEN\\\"}"
        return BackendDialect.loginHints(baseURL: baseURL, directory: directory) + [
            refreshHint,
            "  curl -s \(bearer)-H 'Content-Type: application/json' -d \"\(body)\" \(baseURL)\(path)",
        ]
    }
}

extension PairedRefreshProfile where Errors == ReissueError {
    static func reissue(failureStatus: Int?) -> Self {
        .init(
            name: ProfileName.reissue.rawValue, summary: "POST /auth/reissue {accessToken, refreshToken}; a dead refresh token answers 406",
            path: "/auth/reissue", bearerRequired: nil, answersLifetime: true, failureStatus: failureStatus ?? 406,
            refreshHint: "Refresh (406 means sign in again):")
    }
}

extension PairedRefreshProfile where Errors == RenewalError {
    static func renewal(failureStatus: Int?) -> Self {
        .init(
            name: ProfileName.renewal.rawValue,
            summary: "POST /auth/refresh with Bearer <old access token> and {accessToken, refreshToken}; failure is 401",
            path: "/auth/refresh", bearerRequired: .missingAuthorization, answersLifetime: false, failureStatus: failureStatus ?? 401,
            refreshHint: "Refresh:")
    }
}
