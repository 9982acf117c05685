import CellpathCore
import CellularHTTP

/// The tru.ID REST API as the backend (`--direct`): what a project's own server would call,
/// with the project's credentials (`TruAPIClient`: token cached, retries).
public struct DirectBackend: CheckBackend {
    public let client: TruAPIClient

    public init(client: TruAPIClient) {
        self.client = client
    }

    public var name: String { "tru.ID API \(client.endpoint.baseURL)" }

    public func create(
        _ product: CheckProduct, phoneNumber: String, options: CheckOptions
    ) async throws(CellpathError) -> CreatedCheckHandle {
        do {
            let created = try await client.createCheck(
                product, version: options.apiVersion, phoneNumber: phoneNumber,
                referenceID: options.referenceID, redirectURL: options.redirectURL)
            return CreatedCheckHandle(checkID: created.checkID, checkURL: created.checkURL, ttl: created.ttl)
        } catch {
            throw error.cellpathError(operation: "create the check")
        }
    }

    public func complete(
        _ product: CheckProduct, check: CreatedCheckHandle, callback: CheckCallback?
    ) async throws(CellpathError) -> CheckVerdict {
        do {
            if let callback {
                guard let code = callback.code else { throw CheckVerdict.failedCallback(callback) }
                return CheckVerdict(
                    json: try await client.completeCheck(product, checkID: check.checkID, code: code).json)
            }
            return CheckVerdict(
                json: try await client.checkResult(product, version: .v0_1, checkID: check.checkID).json)
        } catch let error as TruAPIError {
            throw error.cellpathError(operation: callback == nil ? "read the check's result" : "exchange the code")
        } catch let error as CellpathError {
            throw error
        } catch {
            throw CellpathError(.internalError, "\(error)")
        }
    }

    public func simCheck(phoneNumber: String, options: CheckOptions) async throws(CellpathError) -> CheckVerdict {
        do {
            return CheckVerdict(json: try await client.simCheck(phoneNumber: phoneNumber).json)
        } catch {
            throw error.cellpathError(operation: "run the SIMCheck")
        }
    }

    public func coverageAccess() async throws(CellpathError) -> CoverageAccess {
        do {
            let token = try await client.accessToken(scopes: ["coverage"])
            return CoverageAccess(token: token, url: client.endpoint.trimmedBaseURL + "/coverage/v0.1/device_ip")
        } catch {
            throw error.cellpathError(operation: "get a coverage token")
        }
    }
}

extension TruAPIError {
    /// The error as `couldn't <operation>: <what the API said>`, with its kind and hint.
    func cellpathError(operation: String) -> CellpathError {
        var error = cellpathError
        error.message = "couldn't \(operation): \(error.message)"
        return error
    }
}
