import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsString, registerDecorator } from 'class-validator';
import { ALL_SCOPES } from '../../access.js';
import { TextLength } from '../../../common/validation/text-length.decorator.js';
import { MAX_PUBLIC_KEY_LENGTH } from '../public-key.js';

/** A PEM string or a JWK object; what the key is, is checked when it is imported. */
function IsPublicKeyInput(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isPublicKeyInput',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) =>
          (typeof value === 'string' && value.length >= 1 && value.length <= MAX_PUBLIC_KEY_LENGTH) ||
          (value !== null && typeof value === 'object' && !Array.isArray(value) && JSON.stringify(value).length <= MAX_PUBLIC_KEY_LENGTH),
        defaultMessage: () => `public_key must be a PEM string (at most ${MAX_PUBLIC_KEY_LENGTH} characters) or a JWK object`,
      },
    });
  };
}

export class CreateJwtClientDto {
  @ApiProperty({ example: 'Billing backend', minLength: 1, maxLength: 200 })
  @IsString()
  @TextLength(1, 200)
  name: string;

  @ApiProperty({
    description: 'The public key, as a PEM (SPKI) string or a JWK object: RSA (2048 bits or more), EC P-256 or Ed25519. Never a private key.',
    oneOf: [{ type: 'string', minLength: 1, maxLength: MAX_PUBLIC_KEY_LENGTH }, { type: 'object', additionalProperties: true }],
  })
  @IsPublicKeyInput()
  public_key: string | Record<string, unknown>;

  @ApiProperty({ type: [String], enum: ALL_SCOPES, minItems: 1, maxItems: ALL_SCOPES.length, example: ['workflows:read', 'executions:read'] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(ALL_SCOPES.length)
  @IsIn(ALL_SCOPES, { each: true, message: 'each scope must be <resource>:<action> with a known resource and action' })
  scopes: string[];
}
