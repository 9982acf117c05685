import CGIO
import CQMI
import CellpathCore
import GLibRuntime

/// The data path's side in the firmware: WDA's data format (link-layer protocol, QMAP) and the
/// QMAP mux the call's WDS clients bind to.
extension QMIModem {
    func dataFormat() async throws(ModemError) -> DataFormat? {
        let output: Output?
        do {
            output = try await request(
                "get the data format", QMI_SERVICE_WDA,
                states: [QMI_PROTOCOL_ERROR_INVALID_QMI_COMMAND, QMI_PROTOCOL_ERROR_NOT_SUPPORTED],
                start: { client, timeout, call in
                    qmi_client_wda_get_data_format(
                        cqmi_client_wda(client), nil, timeout, call.cancellable, call.callback, call.userData)
                },
                finish: { client, result, error in
                    qmi_client_wda_get_data_format_finish(cqmi_client_wda(client), result, error)
                },
                result: qmi_message_wda_get_data_format_output_get_result,
                unref: qmi_message_wda_get_data_format_output_unref)
        } catch  where error.layer == .protocol {
            session.logger.debug("\(port.name): no data format (\(error.message))")
            return nil
        }
        guard let output else { return nil }
        var link = QMI_WDA_LINK_LAYER_PROTOCOL_UNKNOWN
        var downlink = QMI_WDA_DATA_AGGREGATION_PROTOCOL_DISABLED
        _ = qmi_message_wda_get_data_format_output_get_link_layer_protocol(output.pointer, &link, nil)
        _ = qmi_message_wda_get_data_format_output_get_downlink_data_aggregation_protocol(
            output.pointer, &downlink, nil)
        return Self.dataFormat(link, downlink)
    }

    func setDataFormat(_ format: DataFormat, endpoint port: MuxDataPort?) async throws(ModemError) -> DataFormat? {
        let input = qmi_message_wda_set_data_format_input_new()
        defer { qmi_message_wda_set_data_format_input_unref(input) }
        _ = qmi_message_wda_set_data_format_input_set_link_layer_protocol(
            input, format.linkLayer == .rawIP ? QMI_WDA_LINK_LAYER_PROTOCOL_RAW_IP : QMI_WDA_LINK_LAYER_PROTOCOL_802_3,
            nil)
        let aggregation =
            format.qmap ? QMI_WDA_DATA_AGGREGATION_PROTOCOL_QMAP : QMI_WDA_DATA_AGGREGATION_PROTOCOL_DISABLED
        _ = qmi_message_wda_set_data_format_input_set_uplink_data_aggregation_protocol(input, aggregation, nil)
        _ = qmi_message_wda_set_data_format_input_set_downlink_data_aggregation_protocol(input, aggregation, nil)
        if let port {
            _ = qmi_message_wda_set_data_format_input_set_endpoint_info(
                input, Self.endpointType(port.endpoint), port.interfaceNumber, nil)
        }
        let description = "\(format.linkLayer.rawValue)\(format.qmap ? " with QMAP" : "")"
        guard
            let output = try await request(
                "set the data format to \(description)", QMI_SERVICE_WDA,
                states: [
                    QMI_PROTOCOL_ERROR_INVALID_QMI_COMMAND, QMI_PROTOCOL_ERROR_NOT_SUPPORTED,
                    QMI_PROTOCOL_ERROR_INVALID_ARGUMENT
                ],
                start: { client, timeout, call in
                    qmi_client_wda_set_data_format(
                        cqmi_client_wda(client), input, timeout, call.cancellable, call.callback, call.userData)
                },
                finish: { client, result, error in
                    qmi_client_wda_set_data_format_finish(cqmi_client_wda(client), result, error)
                },
                result: qmi_message_wda_set_data_format_output_get_result,
                unref: qmi_message_wda_set_data_format_output_unref)
        else { return try await dataFormat() }
        var link = QMI_WDA_LINK_LAYER_PROTOCOL_UNKNOWN
        var downlink = QMI_WDA_DATA_AGGREGATION_PROTOCOL_DISABLED
        guard qmi_message_wda_set_data_format_output_get_link_layer_protocol(output.pointer, &link, nil) != 0 else {
            return try await dataFormat()
        }
        _ = qmi_message_wda_set_data_format_output_get_downlink_data_aggregation_protocol(
            output.pointer, &downlink, nil)
        return Self.dataFormat(link, downlink)
    }

    func bind(to port: MuxDataPort) async { muxDataPort = port }

    /// Binds `client` to the mux the bring-up chose, before it starts a call.
    func bindMuxDataPort(_ client: UnsafeMutablePointer<QmiClient>) async throws(ModemError) {
        guard let port = muxDataPort else { return }
        let input = qmi_message_wds_bind_mux_data_port_input_new()
        defer { qmi_message_wds_bind_mux_data_port_input_unref(input) }
        _ = qmi_message_wds_bind_mux_data_port_input_set_endpoint_info(
            input, Self.endpointType(port.endpoint), port.interfaceNumber, nil)
        _ = qmi_message_wds_bind_mux_data_port_input_set_mux_id(input, port.muxID, nil)
        let operation = "bind the call to QMAP mux \(port.muxID)"
        let (_, failure) = try await exchange(
            operation, client, session: session,
            start: { client, timeout, call in
                qmi_client_wds_bind_mux_data_port(
                    cqmi_client_wds(client), input, timeout, call.cancellable, call.callback, call.userData)
            },
            finish: { client, result, error in
                qmi_client_wds_bind_mux_data_port_finish(cqmi_client_wds(client), result, error)
            },
            result: qmi_message_wds_bind_mux_data_port_output_get_result,
            unref: qmi_message_wds_bind_mux_data_port_output_unref)
        if let failure { throw session.error(operation, failure) }
        session.logger.debug(
            "\(self.port.name): WDS client ID \(qmi_client_get_cid(client)) bound to mux \(port.muxID)")
    }

    nonisolated static func endpointType(_ endpoint: MuxDataPort.Endpoint) -> QmiDataEndpointType {
        endpoint == .pcie ? QMI_DATA_ENDPOINT_TYPE_PCIE : QMI_DATA_ENDPOINT_TYPE_HSUSB
    }

    /// WDA's values as a data format; nil for a link layer libqmi does not know.
    nonisolated static func dataFormat(
        _ link: QmiWdaLinkLayerProtocol, _ downlink: QmiWdaDataAggregationProtocol
    ) -> DataFormat? {
        let linkLayer: DataFormat.LinkLayer
        switch link {
        case QMI_WDA_LINK_LAYER_PROTOCOL_RAW_IP: linkLayer = .rawIP
        case QMI_WDA_LINK_LAYER_PROTOCOL_802_3: linkLayer = .ethernet
        default: return nil
        }
        return DataFormat(linkLayer: linkLayer, qmap: downlink != QMI_WDA_DATA_AGGREGATION_PROTOCOL_DISABLED)
    }
}
