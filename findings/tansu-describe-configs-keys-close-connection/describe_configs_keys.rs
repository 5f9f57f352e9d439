// A DescribeConfigs request naming configuration keys decodes with those keys.
//
// DescribeConfigsResource.ConfigurationKeys is a nullable array of (non-nullable) strings. The
// decoder treats each element as nullable too, reads no length before it, and fails with
// Error::StringWithoutLength; the broker then closes the connection.

use nisshi_sans_io::{
    Frame, Header, Result,
    describe_configs_request::{DescribeConfigsRequest, DescribeConfigsResource},
};

fn expected(api_version: i16, size: i32) -> Frame {
    Frame {
        size,
        header: Header::Request {
            api_key: 32,
            api_version,
            correlation_id: 7,
            client_id: Some("adminclient-1".into()),
        },
        body: DescribeConfigsRequest::default()
            .resources(Some(
                [DescribeConfigsResource::default()
                    .resource_type(2)
                    .resource_name("test".into())
                    .configuration_keys(Some(["cleanup.policy".into()].into()))]
                .into(),
            ))
            .include_synonyms(Some(false))
            .include_documentation(Some(false))
            .into(),
    }
}

#[test]
fn describe_configs_request_v3_configuration_keys() -> Result<()> {
    let v = [
        0, 0, 0, 56, 0, 32, 0, 3, 0, 0, 0, 7, 0, 13, 97, 100, 109, 105, 110, 99, 108, 105, 101,
        110, 116, 45, 49, 0, 0, 0, 1, 2, 0, 4, 116, 101, 115, 116, 0, 0, 0, 1, 0, 14, 99, 108,
        101, 97, 110, 117, 112, 46, 112, 111, 108, 105, 99, 121, 0, 0,
    ];

    assert_eq!(expected(3, 56), Frame::request_from_bytes(&v[..])?);
    Ok(())
}

#[test]
fn describe_configs_request_v4_configuration_keys() -> Result<()> {
    let v = [
        0, 0, 0, 51, 0, 32, 0, 4, 0, 0, 0, 7, 0, 13, 97, 100, 109, 105, 110, 99, 108, 105, 101,
        110, 116, 45, 49, 0, 2, 2, 5, 116, 101, 115, 116, 2, 15, 99, 108, 101, 97, 110, 117, 112,
        46, 112, 111, 108, 105, 99, 121, 0, 0, 0, 0,
    ];

    assert_eq!(expected(4, 51), Frame::request_from_bytes(&v[..])?);
    Ok(())
}
