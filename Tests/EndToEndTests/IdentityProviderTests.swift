import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import TestSupport
import Testing

/// The identity providers' built-in dialects through the real binary
/// (docs/dialects.md, "The identity providers' dialects").
struct IdentityProviderTests {
    static let version = HTTPField.Name("X-Supabase-Api-Version")!

    /// `--dialect supabase`: GoTrue's token endpoint, told apart by
    /// `?grant_type=`, its rotation and reuse rules, its 2024-01-01 error
    /// shape, and the Data API's 401 for an expired JWT (docs/dialects/supabase.md).
    @Test func supabaseSignsInRefreshesAndRefusesAsGoTrueDoes() async throws {
        let server = try ServingBinary(["--profile", "supabase", "--log-level", "error"])
        defer { _ = server.interrupt() }
        try await server.withClient { client in
            func token(_ grant: String, _ body: String) async throws -> TestClient.Response {
                try await client.post(
                    "/auth/v1/token?grant_type=\(grant)", headers: [.contentType: "application/json", Self.version: "2024-01-01"],
                    body: ByteBuffer(string: body))
            }
            let wrong = try await token("password", #"{"email": "alice@example.com", "password": "nope"}"#)
            #expect(wrong.status == .badRequest && wrong.headers[Self.version] == "2024-01-01")
            #expect(try wrong.json() as NSDictionary == ["code": "invalid_credentials", "message": "Invalid login credentials"])

            let signIn = try await token("password", #"{"email": "alice@example.com", "password": "wonderland", "gotrue_meta_security": {}}"#)
            #expect(signIn.status == .ok)
            let session = try signIn.json()
            #expect(session["token_type"] as? String == "bearer" && session["expires_in"] as? Int == 3600)
            #expect(session["expires_at"] is Int)
            let user = try #require(session["user"] as? [String: Any])
            for field in ["id", "aud", "app_metadata", "user_metadata", "created_at"] { #expect(user[field] != nil, "user.\(field)") }
            // GoTrue signs users in by email: the default account is alice@example.com, and `alice` is no user.
            #expect(user["email"] as? String == "alice@example.com")
            #expect(try await token("password", #"{"email": "alice", "password": "wonderland"}"#).status == .badRequest)
            let parent = try #require(session["refresh_token"] as? String)

            let refreshed = try await token("refresh_token", #"{"refresh_token": "\#(parent)"}"#)
            #expect(refreshed.status == .ok)
            let child = try #require(try refreshed.json()["refresh_token"] as? String)
            #expect(child != parent)
            // The parent again, as a client that lost the answer sends it: the same child back.
            let again = try await token("refresh_token", #"{"refresh_token": "\#(parent)"}"#)
            #expect(again.status == .ok)
            #expect(try again.json()["refresh_token"] as? String == child)

            // GoTrue's Validate: a token of neither of its shapes is refused before any lookup; one of them is looked up.
            for malformed in ["not-one-of-ours", "abcdefghijk", "ABCDEFGHIJKL", child + "."] {
                let refused = try await token("refresh_token", #"{"refresh_token": "\#(malformed)"}"#)
                #expect(refused.status == .badRequest, "\(malformed)")
                #expect(try refused.json() as NSDictionary == ["code": "validation_failed", "message": "Refresh token is not valid"], "\(malformed)")
            }
            for unknownShape in ["abcdefghijkl", String(child.reversed())] {
                let unknown = try await token("refresh_token", #"{"refresh_token": "\#(unknownShape)"}"#)
                #expect(unknown.status == .badRequest)
                #expect(try unknown.json()["code"] as? String == "refresh_token_not_found", "\(unknownShape)")
            }
            let neither = try await token("id_token", #"{"refresh_token": "\#(child)"}"#)
            #expect(neither.status == .notFound, "a grant_type that is neither endpoint's")

            // The Data API: an access token past its expiry is PostgREST's 401 PGRST303.
            let access = try #require(try refreshed.json()["access_token"] as? String)
            let advanced = try await client.post(
                "/_authmock/clock/advance", headers: [.contentType: "application/json"], body: ByteBuffer(string: #"{"seconds": 3601}"#))
            #expect(advanced.status == .ok)
            let expired = try await client.get("/api/me", headers: [.authorization: "Bearer \(access)"])
            #expect(expired.status == .unauthorized)
            #expect(expired.headers[.wwwAuthenticate] == #"Bearer error="invalid_token", error_description="JWT expired""#)
            #expect(try expired.json()["code"] as? String == "PGRST303")
        }
    }

    /// `--api-token id`: the API as API Gateway's Cognito authorizer answers
    /// on a method without OAuth scopes (docs/dialects/cognito.md): it takes
    /// the id token, refuses the access token, and the id token expires and
    /// is revoked with the access token issued beside it.
    @Test func cognitoWithoutScopesTakesTheIDTokenAtTheAPI() async throws {
        let server = try ServingBinary(["--profile", "cognito", "--api-token", "id", "--log-level", "error"])
        defer { _ = server.interrupt() }
        try await server.withClient { client in
            func initiate(_ body: String, target: String = "InitiateAuth") async throws -> TestClient.Response {
                try await client.post(
                    "/",
                    headers: [
                        .contentType: "application/x-amz-json-1.1", HTTPField.Name("X-Amz-Target")!: "AWSCognitoIdentityProviderService.\(target)",
                    ], body: ByteBuffer(string: body))
            }
            func api(_ token: String) async throws -> TestClient.Response {
                try await client.get("/api/me", headers: [.authorization: "Bearer \(token)"])
            }
            let signIn = try await initiate(
                #"{"AuthFlow": "USER_PASSWORD_AUTH", "ClientId": "demo", "AuthParameters": {"USERNAME": "alice", "PASSWORD": "wonderland"}}"#)
            let result = try #require(try signIn.json()["AuthenticationResult"] as? [String: Any])
            let (id, access, refresh) = try (
                #require(result["IdToken"] as? String), #require(result["AccessToken"] as? String), #require(result["RefreshToken"] as? String)
            )
            #expect(try await api(id).status == .ok)
            let refused = try await api(access)
            #expect(refused.status == .unauthorized)
            #expect(try refused.json() as NSDictionary == ["message": "Unauthorized"])

            let advanced = try await client.post(
                "/_authmock/clock/advance", headers: [.contentType: "application/json"], body: ByteBuffer(string: #"{"seconds": 3601}"#))
            #expect(advanced.status == .ok)
            let expired = try await api(id)
            #expect(expired.status == .unauthorized)
            #expect(try expired.json() as NSDictionary == ["message": "The incoming token has expired"])

            let renewed = try await initiate(
                #"{"AuthFlow": "REFRESH_TOKEN_AUTH", "ClientId": "demo", "AuthParameters": {"REFRESH_TOKEN": "\#(refresh)"}}"#)
            let newID = try #require((try renewed.json()["AuthenticationResult"] as? [String: Any])?["IdToken"] as? String)
            #expect(try await api(newID).status == .ok)
            #expect(try await initiate(#"{"Token": "\#(refresh)", "ClientId": "demo"}"#, target: "RevokeToken").status == .ok)
            #expect(try await api(newID).status == .unauthorized, "the revoked login's id token")
        }
    }

    /// The reference client passes every case that applies on each
    /// identity provider's built-in dialect: one run over all of them, as a
    /// user would start it (their case runs wait on each other's holds
    /// rather than one dialect after another).
    @Test func theReferenceClientPassesEveryCase() async throws {
        let profiles = ["simplejwt", "supabase", "keycloak", "auth0", "firebase", "passport", "cognito", "entra"]
        // 32 case runs at once, not 64: other suites run beside this one on two cores, and the clock variants' 2-s tokens need timely answers.
        let run = try await runAuthmock(
            ["run", "--verbose", "--jobs", "32", "--driver", try referenceDriver()] + profiles.flatMap { ["--profile", $0] })
        #expect(run.status == 0, "\(run.stdout.suffix(3000))\(run.stderr)")
        #expect(run.stdout.contains(" 0 failed, 0 skipped"), "\(run.stdout.suffix(500))")
        for profile in profiles {
            #expect(run.stdout.contains("PASS ") && run.stdout.contains(" [\(profile)] "), "no case ran on \(profile)")
        }
    }

    /// A dialect checked by its vendor's SDK unchanged (from PyPI, installed
    /// by scripts/test.sh): Tests/EndToEndTests/Fixtures/PROFILE-sdk-check.py
    /// signs in, refreshes and meets each refusal through the SDK's own calls
    /// against the served dialect, and ends with "SDK recognises every answer".
    /// keycloak: python-keycloak's token calls, and its connection class
    /// recognising a dead refresh token by the words it keys on; auth0:
    /// auth0-python's GetToken, rotation, and the 403 `invalid_grant`
    /// refusals as its Auth0Error; firebase: firebasil pointed at authmock as
    /// at the Auth emulator, its exact-field dataclasses and exceptions;
    /// cognito: boto3's cognito-idp client signing in and pycognito verifying
    /// both tokens against the pool's JWKS, renewing by its own clock
    /// (RequestsSrpAuth) and meeting each refusal as botocore's ClientError.
    @Test(arguments: [("keycloak", "python-keycloak"), ("auth0", "auth0-python"), ("firebase", "firebasil"), ("cognito", "pycognito")])
    func theVendorSDKRecognisesEveryAnswer(profile: String, sdk: String) async throws {
        let server = try ServingBinary(["--profile", profile, "--log-level", "error"])
        defer { _ = server.interrupt() }
        let script = repositoryRoot.appendingPathComponent("Tests/EndToEndTests/Fixtures/\(profile)-sdk-check.py").path
        let check = try await runProcess("python3", [script, "127.0.0.1:\(server.port)"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("\(sdk) recognises every answer"), "\(check.stdout)")
    }

    /// `--dialect entra --tls`: MSAL for Python, unchanged, with this server
    /// as its authority, trusting the certificate authmock generated
    /// (Tests/EndToEndTests/Fixtures/entra-sdk-check.py): discovery, a
    /// refresh token redeemed, its account from the id token, the cache, a
    /// forced renewal, and a revoked session as its AADSTS50173 error.
    @Test func msalRedeemsRenewsAndRecognisesEveryAnswer() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("entra-tls-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try ServingBinary(["--profile", "entra", "--tls", "--tls-dir", directory.path, "--log-level", "error"])
        defer { _ = server.interrupt() }
        let certificate = directory.appendingPathComponent("authmock-localhost.crt").path
        #expect(FileManager.default.fileExists(atPath: certificate), "--tls writes its certificate to --tls-dir")
        let script = repositoryRoot.appendingPathComponent("Tests/EndToEndTests/Fixtures/entra-sdk-check.py").path
        let check = try await runProcess("python3", [script, "127.0.0.1:\(server.port)", certificate])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("msal recognises every answer"), "\(check.stdout)")
    }
}
