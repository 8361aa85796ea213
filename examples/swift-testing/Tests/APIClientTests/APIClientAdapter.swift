import APIClient
import AuthmockTesting
import Foundation
import Synchronization

/// The API client in the driver protocol's words: sign in, make a call,
/// sign out, each ending in the outcome the app would see.
struct APIClientAdapter: DriverClient {
    let client: APIClient
    /// The app's other instances (its extension: case 9.6), each made at its
    /// first call over the app's session, as the extension's own client is.
    let instances = OtherInstances()

    init(client: APIClient) { self.client = client }

    func client(forInstance number: Int) -> APIClient {
        guard number > 1 else { return client }
        return instances.made.withLock { made in
            if let instance = made[number] { return instance }
            let instance = APIClient(sharingSessionOf: client)
            made[number] = instance
            return instance
        }
    }

    func login(username: String, password: String) async -> DriverOutcome {
        do {
            try await client.signIn(username: username, password: password)
            return DriverOutcome(.ok)
        } catch {
            return outcome(of: error)
        }
    }

    func request(_ request: DriverRequest) async -> DriverOutcome {
        do {
            let response = try await client(forInstance: request.instance).send(
                APIRequest(method: request.method, path: request.path, headers: request.headers, body: request.body.map { Data($0.utf8) }))
            let body = String(decoding: response.body, as: UTF8.self)
            return DriverOutcome((200..<300).contains(response.status) ? .ok : .httpError, status: response.status, body: body)
        } catch {
            return outcome(of: error)
        }
    }

    func logout() async -> DriverOutcome {
        await client.signOut()
        return DriverOutcome(.ok)
    }

    private func outcome(of error: any Error) -> DriverOutcome {
        switch error as? APIError {
        case .signInRequired(let reason): DriverOutcome(.reauthRequired, message: reason)
        // The renewal failed, the call was not sent (or not again): what
        // the app saw is the refresh's failure (`refresh_failed`).
        case .refreshUnavailable(let status, let reason): DriverOutcome(.refreshFailed, status: status, message: reason)
        case .transport(let reason): DriverOutcome(.transportError, message: reason)
        case nil: DriverOutcome(.transportError, message: "\(error)")
        }
    }
}

extension ClientUnderTest {
    /// The API client as the suite runs it: a fresh one per case, against
    /// the case's mock. `sharesRenewal: false` breaks its single flight.
    static func apiClient(sharesRenewal: Bool = true) -> ClientUnderTest {
        // `cancel`: a cancelled case cancels the Swift task running the call, as an app's screen does.
        // `instances`: a call of the app's extension goes through a second client over the same session.
        let capabilities = [Capability.logout, Capability.cancel, Capability.instances]
        return ClientUnderTest(name: "swift-testing-example", version: "1.0", profiles: ["oauth2"], capabilities: capabilities) { hello in
            guard let base = URL(string: hello.baseURL) else { throw URLError(.badURL) }
            return APIClientAdapter(
                client: APIClient(baseURL: base, clientID: hello.clientID, clientSecret: hello.clientSecret, sharesRenewal: sharesRenewal))
        }
    }
}

/// The clients of the app's other instances, by number.
final class OtherInstances: Sendable {
    let made = Mutex<[Int: APIClient]>([:])
}
